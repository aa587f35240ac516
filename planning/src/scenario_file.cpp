#include "moetwin/planning/scenario_file.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/quoted_string.hpp"
#include "moetwin/planning/plan_report.hpp"

namespace moetwin {

namespace {

// How every scenario file a plan writes begins (then the plan's command line and "`"): how --force tells
// an earlier plan's files from the user's.
constexpr const char* kWrittenBy = "# Written by `";

std::string kv(const std::string& key, const std::string& value) {
  return key + " = " + value + "\n";
}
std::string kv(const std::string& key, int value) {
  return kv(key, std::to_string(value));
}
std::string flag(const std::string& key, bool value) {
  return kv(key, value ? "true" : "false");
}
std::string text(const std::string& key, const std::string& value) {
  return kv(key, quoted_string(value));
}

// `line` fit for one TOML comment line: a control character (a newline in a --profile path would end the
// comment and write the rest as TOML keys, issue 55) is written as \u00XX, as quoted_string writes it.
std::string comment_text(const std::string& line) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (const char ch : line) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string scenario_file_text(const Scenario& s, const std::vector<std::string>& comment) {
  std::string out;
  for (const std::string& line : comment) out += "# " + comment_text(line) + "\n";
  out += "# Schema: scenarios/README.md.\n";
  out += text("name", s.name);
  if (!s.description.empty()) out += text("description", s.description);
  out += "\n[model]\n" + text("name", s.model.name);
  out += "\n[cluster]\n" + text("instance", s.instance.name) + kv("nodes", s.nodes);
  // An NVLink domain beyond the node (an NVL72 tray) is written as the job sees it: the scenario may have
  // cut it ([cluster] nvlink_domain_gpus); an 8-GPU node's domain is the node and writes nothing.
  if (nvlink_domain_gpus(s.instance) > s.instance.gpus)
    out += kv("nvlink_domain_gpus", nvlink_domain_gpus(s.instance));
  const ParallelLayout& p = s.parallel;
  out += "\n[parallelism]\n" + kv("tp", p.tp) + kv("pp", p.pp) + kv("vpp", p.vpp) + kv("ep", p.ep) +
         kv("etp", p.etp) + kv("cp", p.cp) + kv("dp", p.dp) +
         (p.pipeline_layout.empty() ? std::string() : text("pipeline_layout", p.pipeline_layout));
  const TrainingConfig& t = s.training;
  out += "\n[training]\n" + kv("micro_batch", t.micro_batch) + kv("global_batch", t.global_batch) +
         kv("seq_length", t.seq_length) + text("recompute", to_string(t.recompute)) + flag("bf16", t.bf16) +
         text("precision", to_string(t.precision)) + flag("fp8_dispatch", t.fp8_dispatch) +
         flag("moe_pad_to_capacity", t.moe_pad_to_capacity) +
         flag("distributed_optimizer", t.distributed_optimizer) + flag("overlap_moe_a2a", t.overlap_moe_a2a) +
         flag("overlap_grad_reduce", t.overlap_grad_reduce) +
         flag("overlap_param_gather", t.overlap_param_gather) +
         (t.cuda_graphs == CudaGraphs::none ? std::string() : text("cuda_graphs", to_string(t.cuda_graphs))) +
         (t.tp_comm_overlap ? flag("tp_comm_overlap", true) : std::string());
  out += "\n[dispatcher]\n" + text("name", s.dispatcher.name);
  out += "\n[stack]\n" + text("name", s.stack.spec.name);
  out += "\n[routing]\n" + text("kind", to_string(s.routing.kind));
  if (s.routing.kind == RoutingKind::zipf) out += kv("zipf_exponent", format_exact(s.routing.zipf_exponent));
  if (s.routing.kind == RoutingKind::histogram) out += text("histogram", s.routing.histogram_path);
  out += kv("seed", std::to_string(s.routing.seed));
  return out;
}

std::string option_file_name(std::size_t rank, const PlanOption& o) {
  const Candidate& c = o.candidate;
  const ParallelLayout& p = c.parallel;
  const std::string number = rank < 10 ? concat({"0", std::to_string(rank)}) : std::to_string(rank);
  return concat({number,
                 "-n",
                 std::to_string(c.nodes),
                 "-tp",
                 std::to_string(p.tp),
                 "-pp",
                 std::to_string(p.pp),
                 "-vpp",
                 std::to_string(p.vpp),
                 "-ep",
                 std::to_string(p.ep),
                 "-dp",
                 std::to_string(p.dp),
                 "-mb",
                 std::to_string(c.micro_batch),
                 "-",
                 to_string(c.recompute),
                 c.overlap_moe_a2a ? "-overlap" : "",
                 "-",
                 o.best().dispatcher,
                 ".toml"});
}

namespace {

// The entries of a folder by name, sorted (directory order is the file system's).
std::vector<std::string> entries_of(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Whether `path` is a scenario file a plan wrote: a regular .toml file whose first line is the comment
// write_plan_scenarios starts each file with (by `command` when it is not empty).
bool written_by_plan(const std::filesystem::path& path, const std::string& command = "") {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.extension() != ".toml" || !fs::is_regular_file(path, ec)) return false;
  // At most the first 4 KiB: a huge .toml without a newline (a 10 GB sparse file) is never read whole.
  std::ifstream in(path);
  std::string first(4096, '\0');
  in.getline(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(std::strlen(first.c_str()));  // getline ends what it read with a NUL
  if (!command.empty()) return first == concat({kWrittenBy, command, "`"});
  return first.rfind(kWrittenBy, 0) == 0;
}

}  // namespace

void check_scenario_dir(const std::string& dir, bool force, const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    const std::vector<std::string> names = entries_of(dir);
    if (force) return;
    // A rerun of the same command (the same plan: plans are deterministic) is no mix.
    const bool same_plan =
        !command.empty() && std::all_of(names.begin(), names.end(), [&](const std::string& n) {
          return written_by_plan(fs::path(dir) / n, command);
        });
    if (names.empty() || same_plan) return;
    throw InputError(
        {"", 0}, "--write-scenarios", dir,
        concat({"a new or empty folder (it holds ", std::to_string(names.size()),
                names.size() == 1 ? " entry: " : " entries, the first ", names.front(),
                ", not all written by this plan's command; --force replaces the scenario files an "
                "earlier plan wrote there)"}));
  }
  if (fs::exists(dir, ec)) throw InputError({"", 0}, "--write-scenarios", dir, "a folder (it is a file)");
  check_output_path(dir);  // its parent folder exists
}

WrittenScenarios write_plan_scenarios(const Plan& plan, const Catalog& catalog, const std::string& dir,
                                      std::size_t top, const std::string& command, bool force) {
  namespace fs = std::filesystem;
  check_scenario_dir(dir, force, command);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directory(dir, ec);
    if (ec) throw InputError({dir, 0}, concat({"cannot create the folder: ", ec.message()}));
  }
  WrittenScenarios out;
  for (const std::string& name : entries_of(dir))
    (written_by_plan(fs::path(dir) / name) ? out.replaced : out.kept).push_back(name);
  const PlanRequest& r = plan.request;
  const ModelSpec& model = catalog.model(r.model);
  const InstanceSpec& instance = catalog.instance(r.instance);
  const GpuSpec& gpu = catalog.gpu(instance.gpu);
  std::vector<std::string>& written = out.written;
  for (std::size_t i = 0; i < plan.options.size() && i < top; ++i) {
    const PlanOption& o = plan.options[i];
    const DispatcherOutcome& b = o.best();
    Scenario s = scenario_for(o.candidate, model, instance, gpu, catalog.dispatcher(b.dispatcher), r);
    const std::string file = option_file_name(i + 1, o);
    s.name = fs::path(file).stem().string();
    s.description =
        concat({"plan option ", std::to_string(i + 1), ": ", o.candidate.label(), " ", b.dispatcher});
    const std::vector<std::string> comment = {
        concat({kWrittenBy + 2, command, "`"}),
        concat({"(moetwin plan, profile ", plan.profile, "): option ", std::to_string(i + 1), " of ",
                std::to_string(plan.options.size()), ", ", format_fixed(b.iteration_s, 6),
                " s/iteration predicted (band ", format_fixed(b.band.lo_s, 3), "..",
                format_fixed(b.band.hi_s, 3), " s), ", format_fixed(o.days, 1), " days and ",
                format_fixed(o.node_hours, 0), " node-hours for ", format_significant(r.tokens, 4),
                " tokens."}),
        "`moetwin predict` on this file with the same profile reproduces that number.",
    };
    const std::string path = (fs::path(dir) / file).string();
    write_file_atomically(path, scenario_file_text(s, comment));
    written.push_back(path);
  }
  // The earlier plan's files this one did not overwrite.
  for (const std::string& name : out.replaced) {
    const fs::path old = fs::path(dir) / name;
    bool rewritten = false;
    for (const std::string& w : written) rewritten = rewritten || fs::path(w).filename() == name;
    if (!rewritten && !fs::remove(old, ec))
      throw InputError({old.string(), 0},
                       concat({"cannot remove an earlier plan's scenario: ", ec.message()}));
  }
  return out;
}

}  // namespace moetwin
