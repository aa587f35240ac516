// The scenario language: TOML -> Scenario (schema in scenarios/README.md). Single-key checks (types,
// ranges, names in the catalog, unknown keys) happen here as each key is read; cross-field rules live in
// scenario_validation.cpp and are shared with the live-run CSV reader.
#include "moetwin/scenario/scenario_parser.hpp"

#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/rescale.hpp"
#include "scenario_rules.hpp"

namespace moetwin {
namespace {

using detail::Field;
using detail::FieldNames;

constexpr int kBig = 1 << 30;          // upper bound of model dimensions (as in the catalog loader)
constexpr int kMaxParallel = 1 << 20;  // upper bound of each parallel size; the rules catch the rest

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> out;
  for (const auto& [k, _] : map) out.push_back(k);
  return out;
}

StrictTable required_table(std::optional<StrictTable>& table, const StrictTable& top,
                           const std::string& key) {
  if (!table) throw InputError(top.where(key), key, "missing", "a [" + key + "] table (required)");
  return *table;
}

// One overridable integer field of ModelSpec.
struct ModelOverride {
  const char* key;
  int ModelSpec::*member;
  int min;
  int max;
  int only_for;  // 0 = any model, 1 = MLA models only, 2 = GQA models only
};

constexpr int kAny = 0;
constexpr int kMla = 1;
constexpr int kGqa = 2;

// Ranges as in the catalog loader (catalog/src/catalog.cpp read_model).
const ModelOverride kModelOverrides[] = {
    {"layers", &ModelSpec::layers, 1, 10000, kAny},
    {"dense_layers", &ModelSpec::dense_layers, 0, 10000, kAny},
    {"hidden", &ModelSpec::hidden, 1, kBig, kAny},
    {"ffn_hidden", &ModelSpec::ffn_hidden, 1, kBig, kAny},
    {"heads", &ModelSpec::heads, 1, 100000, kAny},
    {"query_groups", &ModelSpec::query_groups, 1, 100000, kGqa},
    {"head_dim", &ModelSpec::head_dim, 1, kBig, kGqa},
    {"q_lora_rank", &ModelSpec::q_lora_rank, 0, kBig, kMla},
    {"kv_lora_rank", &ModelSpec::kv_lora_rank, 1, kBig, kMla},
    {"qk_head_dim", &ModelSpec::qk_head_dim, 1, kBig, kMla},
    {"qk_rope_dim", &ModelSpec::qk_rope_dim, 0, kBig, kMla},
    {"v_head_dim", &ModelSpec::v_head_dim, 1, kBig, kMla},
    {"experts", &ModelSpec::experts, 0, 1 << 20, kAny},
    {"expert_ffn_hidden", &ModelSpec::expert_ffn_hidden, 1, kBig, kAny},
    {"shared_ffn_hidden", &ModelSpec::shared_ffn_hidden, 0, kBig, kAny},
    {"top_k", &ModelSpec::top_k, 1, 1 << 20, kAny},
    {"router_groups", &ModelSpec::router_groups, 0, 1 << 20, kAny},
    {"router_topk_groups", &ModelSpec::router_topk_groups, 0, 1 << 20, kAny},
    {"vocab", &ModelSpec::vocab, 1, kBig, kAny},
    {"mtp_layers", &ModelSpec::mtp_layers, 0, 64, kAny},
};

std::optional<Field> field_of_override(const std::string& key) {
  if (key == "layers") return Field::layers;
  if (key == "dense_layers") return Field::dense_layers;
  if (key == "heads") return Field::heads;
  if (key == "query_groups") return Field::query_groups;
  if (key == "experts") return Field::experts;
  if (key == "expert_ffn_hidden") return Field::expert_ffn_hidden;
  if (key == "top_k") return Field::top_k;
  if (key == "router_groups") return Field::router_groups;
  if (key == "router_topk_groups") return Field::router_topk_groups;
  return std::nullopt;
}

ModelSpec read_model(StrictTable& t, const Catalog& catalog, FieldNames& names) {
  names.lines[Field::model] = t.where("name");
  ModelSpec m = catalog.model(t.choice("name", names_of(catalog.models())));
  for (const ModelOverride& o : kModelOverrides) {
    if (auto f = field_of_override(o.key)) names.lines[*f] = t.where(o.key);
    if (!t.has(o.key)) continue;
    const bool mla = m.attention == AttentionKind::mla;
    if ((o.only_for == kMla && !mla) || (o.only_for == kGqa && mla)) {
      const int value = t.int32(o.key, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
      throw InputError(t.where(o.key), t.name(o.key), std::to_string(value),
                       std::string("a key of ") + (o.only_for == kMla ? "MLA" : "GQA") + " models only (" +
                           m.name + " uses " + to_string(m.attention) + " attention)");
    }
    m.*(o.member) = t.int32(o.key, o.min, o.max);
  }
  t.finish();
  return m;
}

void read_parallelism(StrictTable& t, Scenario& s, FieldNames& names) {
  ParallelLayout& p = s.parallel;
  const std::pair<const char*, Field> keys[] = {{"tp", Field::tp}, {"pp", Field::pp},   {"vpp", Field::vpp},
                                                {"ep", Field::ep}, {"etp", Field::etp}, {"cp", Field::cp},
                                                {"dp", Field::dp}};
  for (const auto& [key, field] : keys) names.lines[field] = t.where(key);
  names.lines[Field::pipeline_layout] = t.where("pipeline_layout");
  p = parse_parallel_sizes(t);
  if (t.has("pipeline_layout")) {
    p.pipeline_layout = t.string("pipeline_layout");
    if (p.pipeline_layout.empty()) {
      throw InputError(t.where("pipeline_layout"), t.name("pipeline_layout"), "\"\"",
                       "a Megatron pipeline layout string such as \"Et|(tt|)*30mL\" (omit the key for the "
                       "split rules)");
    }
  }
  if (t.has("dp")) {
    p.dp = t.int32("dp", 1, kMaxParallel);
  } else {
    // Derived as Megatron does: dp = world / (tp * cp * pp).
    p.dp = derived_dp(s);
    if (p.dp == 0) {
      const long long world = static_cast<long long>(s.nodes) * s.instance.gpus;
      const long long model_ranks = static_cast<long long>(p.tp) * p.cp * p.pp;
      throw InputError(t.where("dp"), t.name("dp"), "absent",
                       "derivable as world / (tp * cp * pp), but the world size " + std::to_string(world) +
                           " (" + std::to_string(s.nodes) + " nodes * " + std::to_string(s.instance.gpus) +
                           " GPUs) is not a multiple of tp * cp * pp = " + std::to_string(model_ranks));
    }
  }
  t.finish();
}

}  // namespace

ParallelLayout parse_parallel_sizes(StrictTable& t) {
  ParallelLayout p;
  p.tp = t.int32("tp", 1, kMaxParallel);
  p.pp = t.int32("pp", 1, kMaxParallel);
  p.vpp = t.int32_or("vpp", 1, kMaxParallel, 1);
  p.ep = t.int32_or("ep", 1, kMaxParallel, 1);
  p.etp = t.int32_or("etp", 1, kMaxParallel, 1);
  p.cp = t.int32_or("cp", 1, kMaxParallel, 1);
  return p;
}

namespace {

void read_training(StrictTable& t, TrainingConfig& tr, FieldNames& names, bool& pad_given) {
  names.lines[Field::micro_batch] = t.where("micro_batch");
  names.lines[Field::global_batch] = t.where("global_batch");
  names.lines[Field::seq_length] = t.where("seq_length");
  names.lines[Field::recompute] = t.where("recompute");
  names.lines[Field::overlap_moe_a2a] = t.where("overlap_moe_a2a");
  tr.micro_batch = t.int32("micro_batch", 1, 1 << 20);
  tr.global_batch = t.int32("global_batch", 1, kBig);
  tr.seq_length = t.int32("seq_length", 1, 1 << 24);
  const std::string recompute = t.choice_or("recompute", {"none", "selective", "full"}, "none");
  tr.recompute = recompute == "full"        ? Recompute::full
                 : recompute == "selective" ? Recompute::selective
                                            : Recompute::none;
  tr.bf16 = t.boolean_or("bf16", true);
  names.lines[Field::precision] = t.where("precision");
  const std::string precision = t.has("precision") ? t.string("precision") : "bf16";
  const std::optional<Precision> p = precision_from_string(precision);
  if (!p) {
    throw InputError(t.where("precision"), t.name("precision"), concat({"\"", precision, "\""}),
                     precision_expected(precision));
  }
  tr.precision = *p;
  tr.fp8_dispatch = t.boolean_or("fp8_dispatch", false);
  if (t.has("moe_pad_to_capacity")) {
    tr.moe_pad_to_capacity = t.boolean("moe_pad_to_capacity");
    pad_given = true;
  }
  tr.distributed_optimizer = t.boolean_or("distributed_optimizer", true);
  tr.overlap_moe_a2a = t.boolean_or("overlap_moe_a2a", false);
  names.lines[Field::delay_wgrad_compute] = t.where("delay_wgrad_compute");
  tr.delay_wgrad_compute = t.boolean_or("delay_wgrad_compute", false);
  tr.overlap_grad_reduce = t.boolean_or("overlap_grad_reduce", true);
  tr.overlap_param_gather = t.boolean_or("overlap_param_gather", true);
  names.lines[Field::cuda_graphs] = t.where("cuda_graphs");
  tr.cuda_graphs = *cuda_graphs_from_string(t.choice_or("cuda_graphs", cuda_graphs_names(), "none"));
  names.lines[Field::tp_comm_overlap] = t.where("tp_comm_overlap");
  tr.tp_comm_overlap = t.boolean_or("tp_comm_overlap", false);
  tr.overlap_p2p_comm = t.boolean_or_auto("overlap_p2p_comm");
  names.lines[Field::megatron_fsdp] = t.where("megatron_fsdp");
  tr.megatron_fsdp = t.boolean_or("megatron_fsdp", false);
  names.lines[Field::cpu_offload_layers] = t.where("cpu_offload_layers");
  tr.cpu_offload_layers = t.int32_or("cpu_offload_layers", 0, 1 << 20, 0);
  t.finish();
}

// A key that only makes sense for one routing kind must not appear with another.
void reject_unless(StrictTable& t, const std::string& key, bool allowed, const std::string& kind) {
  if (allowed || !t.has(key)) return;
  std::string value;
  if (key == "zipf_exponent") {
    value =
        format_exact(t.number(key, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()));
  } else {
    // Not "\"" + t.string(key): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
    value = concat({"\"", t.string(key), "\""});
  }
  throw InputError(t.where(key), t.name(key), value, "only with kind = \"" + kind + "\"");
}

RoutingConfig read_routing(StrictTable& t, const std::string& path, FieldNames& names) {
  names.lines[Field::routing_kind] = t.where("kind");
  names.lines[Field::zipf_exponent] = t.where("zipf_exponent");
  names.lines[Field::histogram] = t.where("histogram");
  return parse_routing_table(t, path, "scenario file", "balanced", 1);
}

std::string default_name(const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "scenario" : stem;
}

}  // namespace

RoutingConfig parse_routing_table(StrictTable& t, const std::string& path, const std::string& file_role,
                                  const std::string& default_kind, std::uint64_t default_seed) {
  RoutingConfig r;
  const std::vector<std::string> kinds = {"balanced", "zipf", "group-limited", "histogram"};
  const std::string kind =
      default_kind.empty() ? t.choice("kind", kinds) : t.choice_or("kind", kinds, default_kind);
  r.kind = kind == "zipf"            ? RoutingKind::zipf
           : kind == "group-limited" ? RoutingKind::group_limited
           : kind == "histogram"     ? RoutingKind::histogram
                                     : RoutingKind::balanced;
  reject_unless(t, "zipf_exponent", r.kind == RoutingKind::zipf, "zipf");
  reject_unless(t, "histogram", r.kind == RoutingKind::histogram, "histogram");
  if (r.kind == RoutingKind::zipf) {
    if (!t.has("zipf_exponent")) {
      throw InputError(t.where("zipf_exponent"), t.name("zipf_exponent"), "missing",
                       "a number in (0, 5] (required for kind = \"zipf\")");
    }
    r.zipf_exponent =
        t.number("zipf_exponent", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
    if (!(r.zipf_exponent > 0 && r.zipf_exponent <= 5)) {
      throw InputError(t.where("zipf_exponent"), t.name("zipf_exponent"), format_exact(r.zipf_exponent),
                       "a number in (0, 5]");
    }
  }
  if (r.kind == RoutingKind::histogram) {
    if (!t.has("histogram")) {
      throw InputError(t.where("histogram"), t.name("histogram"), "missing",
                       "the path of a file of measured expert loads (required for kind = \"histogram\")");
    }
    const std::string file = t.string("histogram");
    namespace fs = std::filesystem;
    const fs::path resolved =
        fs::path(file).is_absolute() ? fs::path(file) : fs::path(path).parent_path() / file;
    std::error_code ec;
    if (file.empty() || !fs::is_regular_file(resolved, ec)) {
      throw InputError(
          t.where("histogram"), t.name("histogram"), "\"" + file + "\"",
          "an existing file, relative to the " + file_role + " (looked for " + resolved.string() + ")");
    }
    r.histogram_path = resolved.string();
  }
  r.seed = t.has("seed")
               ? static_cast<std::uint64_t>(t.integer("seed", 0, std::numeric_limits<std::int64_t>::max()))
               : default_seed;
  t.finish();
  return r;
}

Scenario parse_scenario(const std::string& toml_text, const std::string& path, const Catalog& catalog) {
  const toml::table root = parse_toml(toml_text, path);
  StrictTable top(root, path, "");
  FieldNames names;
  names.fallback = {path, 0};

  Scenario s;
  s.source = path;
  s.name = top.string_or("name", default_name(path));
  if (s.name.empty())
    throw InputError(top.where("name"), "name", "\"\"", "a non-empty name (or no name key)");
  s.description = top.string_or("description", "");
  // Take every table first, so that a misspelt table name is reported as an unknown key rather than as
  // the required table it was meant to be.
  auto model = top.table("model");
  auto cluster = top.table("cluster");
  auto parallelism = top.table("parallelism");
  auto training = top.table("training");
  auto dispatcher = top.table("dispatcher");
  auto routing = top.table("routing");
  auto calibration = top.table("calibration");
  auto stack = top.table("stack");
  top.finish();

  StrictTable model_t = required_table(model, top, "model");
  s.model = read_model(model_t, catalog, names);

  StrictTable cluster_t = required_table(cluster, top, "cluster");
  names.lines[Field::instance] = cluster_t.where("instance");
  names.lines[Field::nodes] = cluster_t.where("nodes");
  s.instance = catalog.instance(cluster_t.choice("instance", names_of(catalog.instances())));
  s.gpu = catalog.gpu(s.instance.gpu);
  s.nodes = cluster_t.int32("nodes", 1, 100000);
  // The NVLink domain the job sees, when smaller than the instance's: the GPUs of one rack the job uses
  // (NVIDIA's GB200 DeepSeek-V3 recipe puts 64 EP ranks in each 72-GPU rack, NUM_OF_HYBRID_EP_RANKS_PER_
  // NVLINK_DOMAIN=64: shared/design/nvl72-and-infiniband.md C2), or AWS's half rack (u-p6e-gb200x36: 36).
  // Ranks then fill domains of this many GPUs in torchrun order.
  if (cluster_t.has("nvlink_domain_gpus")) {
    const int full = nvlink_domain_gpus(s.instance);
    const int domain = cluster_t.int32("nvlink_domain_gpus", s.instance.gpus, full);
    if (domain % s.instance.gpus != 0) {
      throw InputError(cluster_t.where("nvlink_domain_gpus"), cluster_t.name("nvlink_domain_gpus"),
                       std::to_string(domain),
                       concat({"a multiple of ", s.instance.name, "'s ", std::to_string(s.instance.gpus),
                               " GPUs per node, at most its NVLink domain of ", std::to_string(full)}));
    }
    s.instance.nvlink_domain_gpus = domain;
  }
  cluster_t.finish();

  StrictTable parallel_t = required_table(parallelism, top, "parallelism");
  read_parallelism(parallel_t, s, names);

  StrictTable training_t = required_table(training, top, "training");
  bool pad_given = false;
  read_training(training_t, s.training, names, pad_given);

  if (stack) {
    const std::string name = stack->choice("name", names_of(catalog.stacks()));
    const NcclKnobs knobs = read_nccl_knobs(*stack);
    stack->finish();
    s.stack = make_stack_choice(catalog.stack(name), knobs, s.instance, false);
  } else {
    s.stack = make_stack_choice(catalog.default_stack(), {}, s.instance, true);
  }
  // The stack's recipe decides the alltoall dispatcher's mode unless the file says.
  if (!pad_given) s.training.moe_pad_to_capacity = s.stack.spec.alltoall_pad_to_capacity;

  if (dispatcher) {
    names.lines[Field::dispatcher] = dispatcher->where("name");
    s.dispatcher = catalog.dispatcher(dispatcher->choice("name", names_of(catalog.dispatchers())));
    dispatcher->finish();
  } else {
    names.lines[Field::dispatcher] = top.where("dispatcher");
    s.dispatcher = catalog.dispatcher("nccl-alltoall");
  }

  if (routing) {
    s.routing = read_routing(*routing, path, names);
  } else {
    names.lines[Field::routing_kind] = top.where("routing");
  }

  if (calibration) {
    s.calibration_profile = calibration->string_or("profile", "");
    calibration->finish();
  }

  detail::check_scenario_rules(s, names);
  return s;
}

Scenario load_scenario_file(const std::string& path, const Catalog& catalog) {
  return parse_scenario(read_text_file(path, input_kind::toml), path, catalog);
}

}  // namespace moetwin
