// `moetwin net SCENARIO.toml --collective all-to-all --bytes 64MiB --group ep`: one collective of a
// scenario's process group on its cluster: the closed-form estimate, the same flows through a network
// model (--backend), and the most loaded links.
#include <algorithm>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "delegated_commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/quoted_string.hpp"
#include "moetwin/common/version.hpp"
#include "moetwin/models/calibrated_collectives.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/topology/cluster.hpp"
#include "moetwin/topology/collectives.hpp"
#include "moetwin/topology/network_models.hpp"
#include "moetwin/topology/placement.hpp"

namespace moetwin::cli {

namespace {

// JSON output layout version; bump on any change of keys or meaning.
constexpr int kNetSchemaVersion = 2;  // 2: collective_source

std::string gbps(double bytes_per_s) {
  return format_fixed(bytes_per_s / 1e9, 2);
}
std::string usec(double s) {
  return format_fixed(s * 1e6, 3);
}
std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}
std::string lpad(const std::string& s, std::size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

struct NetOptions {
  std::string scenario;
  std::string collective = "all-to-all";
  std::string bytes = "64MiB";
  std::string group = "ep";
  std::string algorithm;  // default per collective
  int rank = 0;
  std::string backend = "analytical";
  std::string format = "text";
  double oversubscription = 0;  // 0 = no uplink
  int top = 10;
  std::string out;
  std::string calibration;  // folder of calibration profiles, "" = default, "none" = off
};

void write_estimate_json(std::ostringstream& s, const CollectiveEstimate& e) {
  s << "{\"time_s\": " << format_exact(e.time_s) << ", \"latency_s\": " << format_exact(e.latency_s)
    << ", \"bandwidth_s\": " << format_exact(e.bandwidth_s)
    << ", \"algbw_bytes_per_s\": " << format_exact(e.algbw)
    << ", \"busbw_bytes_per_s\": " << format_exact(e.busbw)
    << ", \"message_bytes\": " << format_exact(e.message_bytes)
    << ", \"nvlink_bytes_per_rank\": " << format_exact(e.nvlink_bytes_per_rank)
    << ", \"network_bytes_per_rank\": " << format_exact(e.network_bytes_per_rank)
    << ", \"bottleneck\": " << quoted_string(e.bottleneck) << "}";
}

std::string run_net(const NetOptions& o, const GlobalOptions& global) {
  const Catalog catalog =
      Catalog::load(global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir);
  const Scenario scenario = load_scenario_file(o.scenario, catalog);
  const InputLocation flag{"command line", 0};
  const CollectiveKind kind = parse_collective_kind(o.collective, flag);
  const CollectiveAlgorithm algorithm =
      o.algorithm.empty() ? default_algorithm(kind) : parse_collective_algorithm(o.algorithm, flag);
  const GroupKind group_kind = parse_group_kind(o.group, flag);
  const double bytes = parse_size(o.bytes);

  ClusterOptions copts;
  if (o.oversubscription != 0) {
    if (!(o.oversubscription >= 1)) {
      throw InputError(flag, "--oversubscription", format_exact(o.oversubscription),
                       "expected >= 1 (or 0: no uplink)");
    }
    copts.uplink_oversubscription = o.oversubscription;
  }
  Cluster cluster(scenario.instance, scenario.gpu, scenario.nodes, copts);
  cluster.seal();
  const Placement placement(scenario);
  if (o.rank < 0 || o.rank >= placement.world()) {
    throw InputError(flag, "--rank", std::to_string(o.rank),
                     "expected a rank in [0, " + std::to_string(placement.world()) + ")");
  }
  if (placement.group_index(group_kind, o.rank) < 0) {
    throw InputError(flag, "--rank", std::to_string(o.rank),
                     std::string("expected a member of a ") + to_string(group_kind) + " group");
  }
  std::vector<int> ranks = placement.group_of(group_kind, o.rank);
  if (kind == CollectiveKind::send_recv) {
    // Point to point: the rank and the next member of its group (PP: the next stage).
    if (ranks.size() < 2) {
      throw InputError(flag, "--group", o.group, "expected a group of at least 2 ranks for send-recv");
    }
    const auto it = std::find(ranks.begin(), ranks.end(), o.rank);
    const int next = (it + 1 == ranks.end()) ? ranks.front() : *(it + 1);
    ranks = {o.rank, next};
  }
  const CollectiveRequest request{kind, algorithm, bytes, ranks};
  std::string params_source;
  const std::string calibration_dir = o.calibration == "none" ? std::string()
                                      : o.calibration.empty() ? default_calibration_dir()
                                                              : o.calibration;
  const CollectiveParams params = collective_params_for(scenario, calibration_dir, params_source);
  const CollectiveEstimate closed = estimate_collective(cluster, request, params);
  const std::unique_ptr<NetworkModel> model = make_network_model(o.backend);
  const CollectiveSimulation sim = simulate_collective(cluster, request, *model, params);
  const CollectiveFlows flows = build_collective_flows(cluster, request, params);
  const auto& links = cluster.platform().links();
  const std::size_t top = std::min(sim.links.size(), static_cast<std::size_t>(std::max(o.top, 0)));

  std::ostringstream s;
  if (o.format == "json") {
    s << "{\n  \"schema_version\": " << kNetSchemaVersion
      << ",\n  \"tool\": {\"name\": \"moetwin net\", \"version\": " << quoted_string(kVersion)
      << ", \"git_revision\": " << quoted_string(kGitRevision) << "},\n";
    s << "  \"scenario\": {\"name\": " << quoted_string(scenario.name)
      << ", \"source\": " << quoted_string(scenario.source)
      << ", \"instance\": " << quoted_string(scenario.instance.name) << ", \"nodes\": " << scenario.nodes
      << ", \"gpus\": " << scenario.gpus() << "},\n";
    s << "  \"collective_source\": " << quoted_string(params_source) << ",\n";
    s << "  \"request\": {\"collective\": " << quoted_string(to_string(kind))
      << ", \"algorithm\": " << quoted_string(to_string(algorithm)) << ", \"bytes\": " << format_exact(bytes)
      << ", \"group\": " << quoted_string(to_string(group_kind)) << ", \"rank\": " << o.rank
      << ", \"ranks\": " << closed.ranks << ", \"nodes\": " << closed.nodes
      << ", \"ranks_per_node\": " << closed.ranks_per_node << ", \"uplink_oversubscription\": "
      << (copts.uplink_oversubscription ? format_exact(*copts.uplink_oversubscription) : std::string("null"))
      << "},\n";
    s << "  \"closed_form\": ";
    write_estimate_json(s, closed);
    s << ",\n  \"network\": {\"backend\": " << quoted_string(model->name())
      << ", \"reference\": " << quoted_string(model->reference()) << ", \"flows\": " << flows.flows.size()
      << ", \"makespan_ns\": " << sim.run.makespan << ", \"estimate\": ";
    write_estimate_json(s, sim.estimate);
    s << "},\n  \"links\": [";
    for (std::size_t i = 0; i < top; ++i) {
      const LinkLoad& l = sim.links[i];
      const NetLink& nl = links[static_cast<std::size_t>(l.link)];
      s << (i ? ",\n    " : "\n    ") << "{\"id\": " << l.link << ", \"name\": " << quoted_string(nl.name)
        << ", \"bandwidth_bytes_per_s\": " << format_exact(nl.bandwidth)
        << ", \"payload_bytes\": " << format_exact(l.payload_bytes)
        << ", \"busy_fraction\": " << format_exact(l.busy_fraction) << "}";
    }
    s << (top ? "\n  ]" : "]") << ",\n  \"links_used\": " << sim.links.size() << "\n}\n";
    return s.str();
  }
  if (o.format != "text") throw InputError(flag, "--format", o.format, "expected text or json");
  s << "moetwin net: " << to_string(kind) << " (" << to_string(algorithm) << ") of "
    << format_fixed(bytes / kMiB, 3) << " MiB per GPU, " << to_string(group_kind) << " group of rank "
    << o.rank << ": " << closed.ranks << " ranks on " << closed.nodes << " node(s), up to "
    << closed.ranks_per_node << " per node";
  // An NVLink domain beyond the node (NVL72 trays): the domains decide NVLink vs network legs.
  if (nvlink_domain_gpus(scenario.instance) > scenario.instance.gpus) {
    s << ", " << closed.domains << " NVLink domain(s) of " << nvlink_domain_gpus(scenario.instance)
      << " GPUs, up to " << closed.ranks_per_domain << " per domain";
  }
  s << "\n";
  s << "scenario: " << scenario.name << " (" << scenario.source << "), " << scenario.nodes << " x "
    << scenario.instance.name << ", " << scenario.gpus() << " GPUs";
  if (copts.uplink_oversubscription)
    s << ", uplink oversubscription " << format_exact(*copts.uplink_oversubscription);
  s << "\ncollectives: " << params_source;
  s << "\nper rank: " << format_fixed(closed.nvlink_bytes_per_rank / kMiB, 3) << " MiB over NVLink, "
    << format_fixed(closed.network_bytes_per_rank / kMiB, 3) << " MiB over EFA; message "
    << format_fixed(closed.message_bytes / kKiB, 1) << " KiB\n\n";
  s << "                  time (us)   algbw (GB/s)   busbw (GB/s)   latency (us)\n";
  const auto row = [&](const std::string& label, const CollectiveEstimate& e) {
    s << pad(label, 16) << ' ' << lpad(usec(e.time_s), 10) << ' ' << lpad(gbps(e.algbw), 14) << ' '
      << lpad(gbps(e.busbw), 14) << ' ' << lpad(usec(e.latency_s), 14) << '\n';
  };
  row("closed form", closed);
  row(model->name(), sim.estimate);
  s << "closed-form bottleneck: " << closed.bottleneck << "; " << flows.flows.size()
    << " aggregated flows\n\n";
  s << "most loaded links (" << top << " of " << sim.links.size() << " used):\n";
  s << "  link                     GB/s    payload MiB   busy\n";
  for (std::size_t i = 0; i < top; ++i) {
    const LinkLoad& l = sim.links[i];
    const NetLink& nl = links[static_cast<std::size_t>(l.link)];
    s << "  " << pad(nl.name, 20) << ' ' << lpad(gbps(nl.bandwidth), 8) << ' '
      << lpad(format_fixed(l.payload_bytes / kMiB, 3), 14) << ' ' << lpad(format_fixed(l.busy_fraction, 3), 6)
      << '\n';
  }
  return s.str();
}

}  // namespace

void add_net_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* net = app.add_subcommand("net", delegated_command("net").description);
  auto o = std::make_shared<NetOptions>();
  net->add_option("SCENARIO", o->scenario, "Scenario TOML")->required()->check(CLI::ExistingFile);
  net->add_option("--collective", o->collective,
                  "all-to-all | all-reduce | reduce-scatter | all-gather | send-recv")
      ->capture_default_str();
  net->add_option("--bytes", o->bytes, "nccl-tests size per GPU, e.g. 64MiB")->capture_default_str();
  net->add_option("--group", o->group, "tp | cp | dp | pp | ep | etp | edp | embedding")
      ->capture_default_str();
  net->add_option("--rank", o->rank, "Use the group containing this rank (send-recv: to the next member)")
      ->capture_default_str();
  net->add_option("--algorithm", o->algorithm, "ring | tree | pairwise (default: NCCL's for the collective)");
  net->add_option("--backend", o->backend, "Network model: analytical | simgrid")->capture_default_str();
  net->add_option("--format", o->format, "text | json")->capture_default_str();
  net->add_option("--oversubscription", o->oversubscription,
                  "Add per-node uplinks with this oversubscription (>= 1); default: non-blocking fabric");
  net->add_option("--top", o->top, "Links to list")->capture_default_str()->check(CLI::Range(0, 1000000));
  net->add_option("--calibration", o->calibration,
                  "Folder of per-GPU calibration profiles whose [nvlink] terms replace the NVLink defaults "
                  "(default " +
                      default_calibration_dir() + "); 'none' = the defaults");
  net->add_option("--out", o->out, "Output file (default stdout), written atomically");
  net->callback([o, &global] { emit_output(run_net(*o, global), o->out); });
}

}  // namespace moetwin::cli
