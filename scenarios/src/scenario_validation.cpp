// Cross-field rules of a scenario, modelled on Megatron-Core 0.17's argument validation
// (megatron/training/arguments.py validate_args) and the Megatron-Bridge recipes the live runs used.
// Each rule has its own message; scenarios/README.md lists them in this order.
#include <string>

#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "scenario_rules.hpp"

namespace moetwin {
namespace detail {
namespace {

using i64 = long long;

std::string str(i64 v) {
  return std::to_string(v);
}

// Throws "where: key: value: expected" for `field`.
[[noreturn]] void fail(const FieldNames& names, Field field, const std::string& value,
                       const std::string& expected) {
  throw InputError(names.where(field), names.key(field), value, expected);
}

void check_positive(const FieldNames& names, Field field, i64 value) {
  if (value < 1) fail(names, field, str(value), "an integer >= 1");
}

void check_model(const Scenario& s, const FieldNames& n) {
  const ModelSpec& m = s.model;
  check_positive(n, Field::layers, m.layers);
  if (m.dense_layers < 0 || m.dense_layers > m.layers) {
    fail(n, Field::dense_layers, str(m.dense_layers), "in [0, layers = " + str(m.layers) + "]");
  }
  check_positive(n, Field::heads, m.heads);
  if (m.attention != AttentionKind::mla && (m.query_groups < 1 || m.heads % m.query_groups != 0)) {
    fail(n, Field::query_groups, str(m.query_groups), "a divisor of heads = " + str(m.heads));
  }
  if (m.experts < 0) fail(n, Field::experts, str(m.experts), "an integer >= 0 (0 = dense model)");
  if (m.experts == 0) return;
  if (m.expert_ffn_hidden < 1) {
    fail(n, Field::expert_ffn_hidden, str(m.expert_ffn_hidden), "an integer >= 1 for an MoE model");
  }
  if (m.top_k < 1 || m.top_k > m.experts) {
    fail(n, Field::top_k, str(m.top_k), "in [1, experts = " + str(m.experts) + "]");
  }
  if (m.router_groups < 0 || (m.router_groups > 0 && m.experts % m.router_groups != 0)) {
    fail(n, Field::router_groups, str(m.router_groups),
         "0 (not group-limited) or a divisor of experts = " + str(m.experts));
  }
  if (m.router_groups == 0 && m.router_topk_groups != 0) {
    fail(n, Field::router_topk_groups, str(m.router_topk_groups),
         "0 when router_groups = 0 (not group-limited)");
  }
  if (m.router_groups > 0) {
    if (m.router_topk_groups < 1 || m.router_topk_groups > m.router_groups) {
      fail(n, Field::router_topk_groups, str(m.router_topk_groups),
           "in [1, router_groups = " + str(m.router_groups) + "]");
    }
    // Group-limited routing picks top_k experts among the experts of the top router_topk_groups groups.
    const i64 reachable = static_cast<i64>(m.router_topk_groups) * (m.experts / m.router_groups);
    if (m.top_k > reachable) {
      fail(n, Field::top_k, str(m.top_k),
           "at most router_topk_groups * experts / router_groups = " + str(m.router_topk_groups) + " * " +
               str(m.experts / m.router_groups) + " = " + str(reachable) +
               " (group-limited routing picks top_k experts inside the chosen groups)");
    }
  }
}

void check_parallel(const Scenario& s, const FieldNames& n) {
  const ParallelLayout& p = s.parallel;
  const ModelSpec& m = s.model;
  check_positive(n, Field::nodes, s.nodes);
  check_positive(n, Field::tp, p.tp);
  check_positive(n, Field::pp, p.pp);
  check_positive(n, Field::vpp, p.vpp);
  check_positive(n, Field::ep, p.ep);
  check_positive(n, Field::etp, p.etp);
  check_positive(n, Field::cp, p.cp);
  check_positive(n, Field::dp, p.dp);
  // Ring attention (sim/context_parallel.hpp) prices causal tiles over the whole sequence: a windowed
  // layer's band under CP (TE's sliding-window CP path) is not modelled.
  if (p.cp > 1 && m.sliding_window > 0) {
    fail(n, Field::cp, str(p.cp),
         "1 for " + m.name + " (sliding-window attention under context parallelism is not modelled)");
  }
  if (m.experts == 0 && p.ep > 1) {
    fail(n, Field::ep, str(p.ep), "1 for a dense model (" + m.name + " has no experts)");
  }
  if (m.experts == 0 && p.etp > 1) {
    fail(n, Field::etp, str(p.etp), "1 for a dense model (" + m.name + " has no experts)");
  }
  const i64 per_node = s.instance.gpus;
  const i64 world = static_cast<i64>(s.nodes) * per_node;
  const i64 stage_ranks = static_cast<i64>(p.tp) * p.cp * p.dp;  // ranks of one pipeline stage
  if (stage_ranks * p.pp != world) {
    fail(n, Field::dp, str(p.dp),
         "tp * cp * dp * pp = " + str(p.tp) + " * " + str(p.cp) + " * " + str(p.dp) + " * " + str(p.pp) +
             " = " + str(stage_ranks * p.pp) + " equal to the world size, nodes * GPUs per node = " +
             str(s.nodes) + " * " + str(per_node) + " = " + str(world));
  }
  if (per_node % p.tp != 0) {
    fail(n, Field::tp, str(p.tp),
         "a divisor of the " + str(per_node) + " GPUs per " + s.instance.name +
             " node (tensor parallelism stays inside one node's NVLink domain)");
  }
  if (m.heads % p.tp != 0) fail(n, Field::tp, str(p.tp), "a divisor of heads = " + str(m.heads));
  // Megatron splits the KV groups over TP ranks; with tp > query_groups each group is replicated on
  // tp / query_groups ranks (the qwen3-235b live runs: 4 groups on TP 8). Anything else leaves a rank
  // with a fraction of a group.
  if (m.attention != AttentionKind::mla && m.query_groups % p.tp != 0 && p.tp % m.query_groups != 0) {
    fail(n, Field::tp, str(p.tp),
         "a divisor or a multiple of query_groups = " + str(m.query_groups) +
             " (each TP rank holds whole KV groups, or one group replicated)");
  }
  const i64 expert_ranks = static_cast<i64>(p.ep) * p.etp;
  if (stage_ranks % expert_ranks != 0) {
    fail(n, Field::ep, str(p.ep),
         "ep * etp = " + str(p.ep) + " * " + str(p.etp) + " dividing tp * cp * dp = " + str(p.tp) + " * " +
             str(p.cp) + " * " + str(p.dp) + " = " + str(stage_ranks) +
             " (Megatron-Core carves ep * etp * edp = tp * cp * dp from the ranks of a pipeline stage)");
  }
  if (m.experts > 0 && m.experts % p.ep != 0) {
    fail(n, Field::ep, str(p.ep), "a divisor of experts = " + str(m.experts));
  }
  if (m.experts > 0 && m.expert_ffn_hidden % p.etp != 0) {
    fail(n, Field::etp, str(p.etp), "a divisor of expert_ffn_hidden = " + str(m.expert_ffn_hidden));
  }
  if (p.vpp > 1 && p.pp == 1) {
    fail(n, Field::vpp, str(p.vpp), "1 when pp = 1 (virtual pipeline chunks need pipeline parallelism)");
  }
  // A layout string is blamed for a split it names; the layer count for a split the rules cannot make.
  const Field split = p.pipeline_layout.empty() ? Field::layers : Field::pipeline_layout;
  make_pipeline_layout(m, p, n.where(split), n.key(split));
}

// CPU offload of activations (sim/cpu_offload.hpp): Megatron-Core's TransformerConfig asserts
// cpu_offloading_num_layers in [0, num_layers), no pipeline parallelism and no activation recomputation;
// Megatron-Bridge's CPU-offloading guide adds no CUDA graphs (shared/design/nvidia-mechanisms.md 4). The
// combined 1F1B of overlap_moe_a2a with offload is not modelled, and the copies need the instance's host
// link from the catalog.
void check_cpu_offload(const Scenario& s, const FieldNames& n) {
  const TrainingConfig& t = s.training;
  if (t.cpu_offload_layers == 0) return;
  const std::string value = str(t.cpu_offload_layers);
  const auto refuse = [&](const std::string& expected) {
    fail(n, Field::cpu_offload_layers, value, expected);
  };
  if (t.cpu_offload_layers < 0 || t.cpu_offload_layers >= s.model.layers) {
    refuse("0 .. " + str(s.model.layers - 1) + " (Megatron-Core offloads fewer layers than " + s.model.name +
           "'s " + str(s.model.layers) + ")");
  }
  if (s.parallel.pp > 1)
    refuse("0 with pp = " + str(s.parallel.pp) + " (Megatron-Core offloads only without a pipeline)");
  if (t.recompute != Recompute::none) {
    refuse(std::string("0 with recompute ") + to_string(t.recompute) +
           " (Megatron-Core does not offload recomputed activations)");
  }
  if (t.cuda_graphs != CudaGraphs::none) {
    refuse(std::string("0 with cuda_graphs ") + to_string(t.cuda_graphs) +
           " (Megatron-Bridge: CPU offloading does not run with CUDA graphs)");
  }
  if (t.overlap_moe_a2a) refuse("0 with overlap_moe_a2a (offload under the combined 1F1B is not modelled)");
  if (s.instance.host_link.empty()) {
    refuse("0 on " + s.instance.name + " (its host link is not in the catalog: instances.toml host_link)");
  }
}

void check_training(const Scenario& s, const FieldNames& n) {
  const ParallelLayout& p = s.parallel;
  const TrainingConfig& t = s.training;
  // FP8 recipes need FP8 tensor cores (Hopper and later); MX block scaling needs Blackwell's.
  if (is_fp8(t.precision) && !(s.gpu.fp8_flops > 0)) {
    fail(n, Field::precision, std::string("\"") + to_string(t.precision) + "\"",
         "bf16 on " + s.gpu.name + " (no FP8 tensor cores in the catalog)");
  }
  if (t.precision == Precision::mxfp8 && !s.gpu.mxfp8) {
    fail(n, Field::precision, "\"mxfp8\"",
         "a recipe " + s.gpu.name +
             " can run (MXFP8 block scaling needs Blackwell tensor cores): bf16, "
             "fp8-hybrid, fp8-current or fp8-blockwise");
  }
  if (is_nvfp4(t.precision) && !(s.gpu.fp4_flops > 0)) {
    fail(n, Field::precision, "\"nvfp4\"",
         "a recipe " + s.gpu.name +
             " can run (NVFP4 needs FP4 tensor cores: Blackwell B200, B300, GB200, GB300): bf16 or an FP8 "
             "recipe");
  }
  check_positive(n, Field::micro_batch, t.micro_batch);
  check_positive(n, Field::global_batch, t.global_batch);
  check_positive(n, Field::seq_length, t.seq_length);
  const i64 per_step = static_cast<i64>(t.micro_batch) * p.dp;
  if (t.global_batch % per_step != 0) {
    fail(
        n, Field::global_batch, str(t.global_batch),
        "a multiple of micro_batch * dp = " + str(t.micro_batch) + " * " + str(p.dp) + " = " + str(per_step));
  }
  const i64 microbatches = t.global_batch / per_step;
  if (p.vpp > 1 && microbatches % p.pp != 0) {
    fail(n, Field::global_batch, str(t.global_batch),
         "global_batch / (micro_batch * dp) = " + str(microbatches) + " microbatches, a multiple of pp = " +
             str(p.pp) + " (Megatron's interleaved schedule with vpp = " + str(p.vpp) + ")");
  }
  if (p.tp > 1 && t.seq_length % (static_cast<i64>(p.tp) * p.cp) != 0) {
    fail(n, Field::seq_length, str(t.seq_length),
         "a multiple of tp * cp = " + str(p.tp) + " * " + str(p.cp) +
             " (sequence parallelism splits each sequence over the tp * cp ranks)");
  }
  if (p.cp > 1 && t.seq_length % (2 * static_cast<i64>(p.cp)) != 0) {
    fail(n, Field::seq_length, str(t.seq_length),
         "a multiple of 2 * cp = " + str(2 * static_cast<i64>(p.cp)) +
             " (context parallelism cuts each sequence into 2 * cp load-balanced chunks)");
  }
  // Megatron-FSDP as modelled (sim/fsdp.hpp): per-layer units of a dense model without a pipeline, the
  // layouts NVIDIA's FSDP rows and recipes use (TP <= 2, PP 1). Expert parameters (sharded over edp with
  // their own units) and pipeline chunks (units per virtual stage, Megatron asserts interleaving off with
  // the combined 1F1B) are not modelled.
  if (t.megatron_fsdp && s.model.experts > 0) {
    fail(n, Field::megatron_fsdp, n.csv ? "1" : "true",
         "off for " + s.model.name + " (Megatron-FSDP of expert parameters is not modelled)");
  }
  if (t.megatron_fsdp && p.pp > 1) {
    fail(n, Field::megatron_fsdp, n.csv ? "1" : "true",
         "off with pp = " + str(p.pp) + " (Megatron-FSDP with a pipeline is not modelled)");
  }
  check_cpu_offload(s, n);
  // Megatron-Core asserts delay_wgrad_compute only with overlap_moe_expert_parallel_comm
  // (transformer_config.py; shared/design/nvidia-mechanisms.md 2).
  if (t.delay_wgrad_compute && !t.overlap_moe_a2a) {
    fail(n, Field::delay_wgrad_compute, n.flag(true),
         "false without overlap_moe_a2a (Megatron-Core moves the weight gradients only in the EP-overlapped "
         "schedule)");
  }
  // TE userbuffers overlap the sequence-parallel TP all-gathers and reduce-scatters with their GEMMs;
  // with tp = 1 there are none (Megatron turns sequence_parallel off at tp = 1 and tp_comm_overlap with
  // it, with a warning): asking for it is a mistake in the scenario, not a no-op to hide.
  if (t.tp_comm_overlap && p.tp < 2) {
    fail(n, Field::tp_comm_overlap, n.flag(true),
         n.flag(false) +
             " when tp = 1 (TP communication overlap pipelines the sequence-parallel all-gathers and "
             "reduce-scatters of tp > 1 with their GEMMs; tp = 1 has none)");
  }
  if (t.overlap_moe_a2a) {
    if (p.ep < 2) {
      fail(n, Field::overlap_moe_a2a, n.flag(true),
           n.flag(false) +
               " when ep = 1 (Megatron asserts expert_model_parallel_size > 1 for "
               "overlap_moe_expert_parallel_comm)");
    }
    // Megatron-Core (TransformerConfig's A2A-overlap checks): "virtual_pipeline_model_parallel_size must be
    // specified when pipeline_model_parallel_size > 1"; with pp = 1 it runs in the combined 1F1B of
    // forward_backward_no_pipelining (sim/schedule.hpp).
    if (p.vpp < 2 && p.pp > 1) {
      fail(n, Field::overlap_moe_a2a, n.flag(true),
           n.flag(false) +
               " unless vpp >= 2 or pp = 1 (with a pipeline the EP all-to-all overlap runs in the "
               "interleaved 1F1B schedule; pp = " +
               str(p.pp) + ", vpp = " + str(p.vpp) + ")");
    }
    if (t.recompute == Recompute::full) {
      fail(n, Field::recompute, "\"full\"",
           "none or selective when overlap_moe_a2a is on (Megatron asserts recompute_granularity != full "
           "for overlap_moe_expert_parallel_comm)");
    }
  }
}

void check_dispatcher_and_routing(const Scenario& s, const FieldNames& n) {
  const DispatcherSpec& d = s.dispatcher;
  // The training stack's own gate and the transport's fabric: a dispatcher the run would not use is refused,
  // never priced (catalog/dispatcher_gate.hpp).
  if (const auto why = dispatcher_refusal(d, s.instance, s.gpu, s.parallel.etp * s.parallel.ep, s.gpus())) {
    fail(n, Field::dispatcher, "\"" + d.name + "\"",
         concat({"a dispatcher that runs on ", s.instance.name, ": ", *why}));
  }
  // A full-iteration graph cannot hold a host sync, and every dropless dispatch syncs the host (the
  // alltoall dispatcher's token-count copy, DeepEP's busy-wait on received counts). NVIDIA's full-iteration
  // recipes pad experts to capacity so the graph captures (design doc section D: capacity factor 1.5 with
  // paged stash); the twin's padded mode is the alltoall dispatcher with moe_pad_to_capacity. HybridEP is
  // CUDA-graph compatible with no CPU-GPU sync (DeepEP docs/README_Hybrid-EP.md, design doc C2).
  if (s.training.cuda_graphs == CudaGraphs::te_router && s.model.experts == 0) {
    fail(n, Field::cuda_graphs, n.csv ? "te-router" : "\"te-router\"",
         "none, te-scoped or full-iteration for " + s.model.name +
             " (te-router captures the MoE router; the model has no experts)");
  }
  if (s.training.cuda_graphs == CudaGraphs::full_iteration && s.model.experts > 0 &&
      d.flex_backend != FlexBackend::hybridep &&
      !(s.training.moe_pad_to_capacity && d.transport == DispatcherTransport::nccl)) {
    fail(n, Field::cuda_graphs, n.csv ? "full-iteration" : "\"full-iteration\"",
         "none or te-scoped for " + s.model.name + " with " + d.name +
             (s.training.moe_pad_to_capacity ? "" : " unpadded") +
             " (a full-iteration CUDA graph holds no host sync; a MoE model needs nccl-alltoall with "
             "moe_pad_to_capacity = true, as NVIDIA's recipes pad experts to capacity, or hybridep)");
  }
  if (const auto why = rank_cap_refusal(d, s.parallel.ep))
    fail(n, Field::dispatcher, "\"" + d.name + "\"", *why);
  const RoutingConfig& r = s.routing;
  if (r.kind == RoutingKind::group_limited && s.model.router_groups == 0) {
    fail(n, Field::routing_kind, "\"group-limited\"",
         "balanced, zipf or histogram for " + s.model.name + " (it has no router_groups)");
  }
  if (r.kind != RoutingKind::balanced && s.model.experts == 0) {
    fail(n, Field::routing_kind, "\"" + std::string(to_string(r.kind)) + "\"",
         "balanced for a dense model (" + s.model.name + " has no experts)");
  }
  if (r.kind == RoutingKind::zipf && !(r.zipf_exponent > 0 && r.zipf_exponent <= 5)) {
    fail(n, Field::zipf_exponent, format_exact(r.zipf_exponent), "a number in (0, 5]");
  }
  if (r.kind == RoutingKind::histogram && r.histogram_path.empty()) {
    fail(n, Field::histogram, "\"\"", "the path of a file of measured expert loads");
  }
}

}  // namespace

std::string FieldNames::key(Field field) const {
  if (csv) {
    switch (field) {
      case Field::layers:
        return "layers";
      case Field::dense_layers:
      case Field::heads:
      case Field::query_groups:
      case Field::experts:
      case Field::expert_ffn_hidden:
      case Field::top_k:
      case Field::router_groups:
      case Field::router_topk_groups:
      case Field::model:
        return "model";
      case Field::instance:
        return "instance";
      case Field::nodes:
        return "nodes";
      case Field::tp:
        return "tp";
      case Field::pp:
        return "pp";
      case Field::vpp:
        return "vpp";
      case Field::ep:
        return "ep";
      case Field::etp:
        return "etp";
      case Field::cp:
        return "cp";
      case Field::dp:
        return "dp";
      case Field::pipeline_layout:
        return "pipeline_layout";
      case Field::micro_batch:
        return "mb";
      case Field::global_batch:
        return "gbs";
      case Field::seq_length:
        return "seq";
      case Field::recompute:
        return "recompute";
      case Field::overlap_moe_a2a:
        return "overlap";
      case Field::dispatcher:
        return "dispatcher";
      case Field::routing_kind:
      case Field::zipf_exponent:
      case Field::histogram:
        return "routing";
      case Field::precision:
        return "precision";
      case Field::cuda_graphs:
        return "cuda_graphs";
      case Field::tp_comm_overlap:
        return "tp_comm_overlap";
      case Field::megatron_fsdp:
        return "fsdp";
      case Field::cpu_offload_layers:
        return "cpu_offload_layers";
      case Field::delay_wgrad_compute:
        return "delay_wgrad_compute";
    }
    return "row";
  }
  switch (field) {
    case Field::model:
      return "model.name";
    case Field::layers:
      return "model.layers";
    case Field::dense_layers:
      return "model.dense_layers";
    case Field::heads:
      return "model.heads";
    case Field::query_groups:
      return "model.query_groups";
    case Field::experts:
      return "model.experts";
    case Field::expert_ffn_hidden:
      return "model.expert_ffn_hidden";
    case Field::top_k:
      return "model.top_k";
    case Field::router_groups:
      return "model.router_groups";
    case Field::router_topk_groups:
      return "model.router_topk_groups";
    case Field::instance:
      return "cluster.instance";
    case Field::nodes:
      return "cluster.nodes";
    case Field::tp:
      return "parallelism.tp";
    case Field::pp:
      return "parallelism.pp";
    case Field::vpp:
      return "parallelism.vpp";
    case Field::ep:
      return "parallelism.ep";
    case Field::etp:
      return "parallelism.etp";
    case Field::cp:
      return "parallelism.cp";
    case Field::dp:
      return "parallelism.dp";
    case Field::pipeline_layout:
      return "parallelism.pipeline_layout";
    case Field::micro_batch:
      return "training.micro_batch";
    case Field::global_batch:
      return "training.global_batch";
    case Field::seq_length:
      return "training.seq_length";
    case Field::recompute:
      return "training.recompute";
    case Field::overlap_moe_a2a:
      return "training.overlap_moe_a2a";
    case Field::dispatcher:
      return "dispatcher.name";
    case Field::routing_kind:
      return "routing.kind";
    case Field::zipf_exponent:
      return "routing.zipf_exponent";
    case Field::histogram:
      return "routing.histogram";
    case Field::precision:
      return "training.precision";
    case Field::cuda_graphs:
      return "training.cuda_graphs";
    case Field::tp_comm_overlap:
      return "training.tp_comm_overlap";
    case Field::megatron_fsdp:
      return "training.megatron_fsdp";
    case Field::cpu_offload_layers:
      return "training.cpu_offload_layers";
    case Field::delay_wgrad_compute:
      return "training.delay_wgrad_compute";
  }
  return "scenario";
}

InputLocation FieldNames::where(Field field) const {
  auto it = lines.find(field);
  return it == lines.end() ? fallback : it->second;
}

void check_scenario_rules(const Scenario& scenario, const FieldNames& names) {
  check_model(scenario, names);
  check_parallel(scenario, names);
  check_training(scenario, names);
  check_dispatcher_and_routing(scenario, names);
}

}  // namespace detail

void validate_scenario(const Scenario& scenario, const InputLocation& where) {
  detail::FieldNames names;
  names.fallback = where;
  detail::check_scenario_rules(scenario, names);
}

}  // namespace moetwin
