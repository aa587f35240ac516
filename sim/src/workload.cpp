#include "moetwin/sim/workload.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "moe_pricing.hpp"
#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/models/dispatcher_cost.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/sim/cuda_graphs.hpp"
#include "moetwin/sim/dispatcher_fit.hpp"
#include "moetwin/sim/layer_ops.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/schedule.hpp"
#include "moetwin/sim/tp_comm_overlap.hpp"
#include "moetwin/sim/workload_estimate.hpp"
#include "moetwin/topology/placement.hpp"
#include "moetwin/topology/shared_placement.hpp"
#include "stage_builder.hpp"
#include "workload_template.hpp"

namespace moetwin {

RankGroups megatron_rank_groups(const ParallelLayout& p, int gpus_per_node, int a2a_reach_gpus) {
  const std::shared_ptr<const Placement> shared = shared_placement(p, gpus_per_node);
  const Placement& placement = *shared;
  RankGroups g;
  g.world = p.world();
  g.gpus_per_node = gpus_per_node;
  g.a2a_reach_gpus = a2a_reach_gpus > 0 ? a2a_reach_gpus : gpus_per_node;
  g.stage_size = p.tp * p.cp * p.dp;
  g.tp = placement.groups(GroupKind::tp);
  g.dp = placement.groups(GroupKind::dp);
  if (p.cp > 1) {
    // Megatron reduces the dense gradients (and shards the distributed optimizer) over dp x cp: the CP
    // ranks hold the same weights (get_data_parallel_group(with_context_parallel=True)). Rank order
    // tp-cp-dp-pp: one group per (tp rank, pp stage).
    g.cp = placement.groups(GroupKind::cp);
    g.dp.clear();
    for (int pp = 0; pp < p.pp; ++pp) {
      for (int tp = 0; tp < p.tp; ++tp) {
        std::vector<int> grp;
        for (int dp = 0; dp < p.dp; ++dp) {
          for (int cp = 0; cp < p.cp; ++cp) grp.push_back(placement.dense_rank(tp, cp, dp, pp));
        }
        g.dp.push_back(std::move(grp));
      }
    }
  }
  g.ep = placement.groups(GroupKind::ep);
  g.etp = placement.groups(GroupKind::etp);
  g.edp = placement.groups(GroupKind::edp);
  g.pipelines = placement.groups(GroupKind::pp);
  g.ep_group_of.assign(static_cast<std::size_t>(g.world), -1);
  for (std::size_t i = 0; i < g.ep.size(); ++i) {
    for (int r : g.ep[i]) g.ep_group_of[static_cast<std::size_t>(r)] = static_cast<int>(i);
  }
  return g;
}

// The stage builder's (stage_builder.hpp).
using stage_emission::Ctx;
using stage_emission::is_pipeline;
using stage_emission::net_load_of;
using stage_emission::StageBuilder;

double host_time_factor(const SimProfile& prof, const InstanceSpec& instance) {
  if (!(prof.host_reference_cpu_score > 0) || !(instance.cpu_single_thread_score > 0)) return 1.0;
  return prof.host_reference_cpu_score / instance.cpu_single_thread_score;
}

SimProfile host_scaled(const SimProfile& prof, const InstanceSpec& instance) {
  const double f = host_time_factor(prof, instance);
  if (f == 1.0) return prof;
  SimProfile p = prof;
  p.launch_s *= f;
  p.backward_launch_s *= f;
  p.grouped_gemm_launch_s *= f;
  p.graph_launch_s *= f;
  p.layer_host_s *= f;
  p.moe_host_s *= f;
  return p;
}

namespace {

// Every stage's program as the builder emits it (StageTemplate), before the MoE costs are priced.
std::vector<StageTemplate> emit_stages(const Ctx& c, const PipelineOptions& popt) {
  const ParallelLayout& par = c.s.parallel;
  std::vector<StageTemplate> out;
  out.reserve(static_cast<std::size_t>(par.pp));
  for (int stage = 0; stage < par.pp; ++stage) {
    StageBuilder b(c, stage);
    StageTemplate t;
    // Stages differ by the embedding and the head only: the previous stage's op count (+1/8) spares the
    // op vector's regrowth (5-13% of a plan's replays, docs/2026-12-04-plan-speed.md).
    if (!out.empty()) t.program.reserve(out.back().program.ops().size() * 9 / 8);
    b.set_labels(t.program);
    // overlap_moe_a2a without a pipeline runs Megatron-Core's combined 1F1B of
    // forward_backward_no_pipelining.
    emit_pipeline(t.program,
                  c.combined && par.pp == 1
                      ? no_pipelining_combined_schedule(c.m)
                      : pipeline_schedule(par.pp, par.vpp, c.m, stage, popt.p2p_mode, c.combined),
                  par.vpp, c.m, b, popt);
    for (int op : b.sync_ops_) t.program.op(op).sync = HostSync::op;
    if (c.s.training.cuda_graphs == CudaGraphs::full_iteration)
      capture_full_iteration(t.program, c.prof.graph_launch_s);
    // The pipeline sends' and receives' flow-model loads, asked in op order as the pricing assigns them.
    std::array<bool, kChannelKinds> asked{};
    for (const OpSpec& o : t.program.ops()) {
      const auto k = static_cast<std::size_t>(o.channel);
      if (o.kind != OpKind::comm || o.net_load >= 0 || !is_pipeline(o.channel) || asked[k]) continue;
      asked[k] = true;
      t.p2p_loads[k] = b.p2p_load(o.channel);
    }
    t.vars = b.vars();
    t.comm = b.comm_entries();
    t.moe_layers = b.moe_layers();
    t.a2a_ops = b.a2a_ops_;
    t.local_experts = b.local_experts();
    out.push_back(std::move(t));
  }
  return out;
}

// What the emission reads (emit_stages), for WorkloadTemplateKey: `prof` (host-scaled) without the
// members only the MoE costs, the engine or the host scaling read.
SimProfile emission_profile(const SimProfile& prof) {
  SimProfile p = prof;
  p.host_reference_cpu_score = 0;  // read by host_scaled, before: the scaled terms carry it
  p.proxy_reference_instance.clear();
  p.network = NetworkMode::closed_form;  // the engine's
  p.a2a_by_dispatcher.clear();           // the MoE cost seam's (ScaledMoeCost) ...
  p.model_params.clear();                // ... the dispatcher model's ...
  p.stack_a2a_scale.clear();
  p.generic_a2a = {};
  return p;
}

WorkloadTemplateKey template_key(const Scenario& s, const SimProfile& prof, const WorkloadSeams& seams) {
  WorkloadTemplateKey k;
  k.model = s.model;
  k.parallel = s.parallel;
  k.training = s.training;
  k.fused_permute = s.dispatcher.fused_permute;
  k.nccl_transport = s.dispatcher.transport == DispatcherTransport::nccl;
  k.gpus_per_node = s.instance.gpus;
  k.overlap_p2p = overlap_p2p_comm(s);
  k.host_link_bandwidth = s.training.cpu_offload_layers > 0 ? s.instance.host_link_bandwidth : 0;
  k.profile = emission_profile(prof);
  k.compute = seams.compute;
  k.comm = seams.comm.get();
  return k;
}

// The microbatch count of `s`, refused when the schedule cannot run it.
int checked_microbatches(const Scenario& s) {
  const InputLocation where{s.source, 0};
  const ParallelLayout& par = s.parallel;
  const int m = s.training.microbatches(par);
  if (m < 1) throw InputError(where, "global_batch", std::to_string(s.training.global_batch), ">= mb x dp");
  if (par.vpp > 1 && m % par.pp != 0) {
    throw InputError(where, "global_batch", std::to_string(s.training.global_batch),
                     "microbatches (gbs / (mb x dp) = " + std::to_string(m) +
                         ") divisible by pp with vpp > 1 (Megatron's interleaved schedule)");
  }
  return m;
}

// The emission context: tokens per microbatch, the combined 1F1B, every rank's groups and pipeline
// neighbours.
Ctx make_ctx(const Scenario& s, const SimProfile& prof, const BuiltWorkload& out, const CommCostModel& comm,
             const MoeCostModel& moe) {
  const ParallelLayout& par = s.parallel;
  Ctx c{s,  prof, out.compute, out.groups, out.layout, comm, moe, out.microbatches, 0, par.tp, false, {},
        {}, {},   {},          {},         {},         {},   {}};
  c.T = static_cast<double>(s.training.micro_batch) * s.training.seq_length / par.cp;
  // Megatron-Core pairs a forward with a backward when overlapping the EP A2A: in the interleaved steady
  // state (vpp > 1; it asserts a virtual pipeline when pp > 1) or in forward_backward_no_pipelining (pp 1).
  c.combined = s.training.overlap_moe_a2a && (par.vpp > 1 || par.pp == 1);
  const RankGroups& g = out.groups;
  const auto W = static_cast<std::size_t>(g.world);
  c.tp_of.assign(W, nullptr);
  c.dp_of.assign(W, nullptr);
  c.ep_of.assign(W, nullptr);
  c.etp_of.assign(W, nullptr);
  c.edp_of.assign(W, nullptr);
  c.prev_of.assign(W, 0);
  c.next_of.assign(W, 0);
  auto index = [](std::vector<const std::vector<int>*>& of, const std::vector<std::vector<int>>& groups) {
    for (const auto& grp : groups) {
      for (int r : grp) of[static_cast<std::size_t>(r)] = &grp;
    }
  };
  index(c.tp_of, g.tp);
  index(c.dp_of, g.dp);
  index(c.ep_of, g.ep);
  index(c.etp_of, g.etp);
  index(c.edp_of, g.edp);
  if (!g.cp.empty()) c.cp_next_of.assign(W, 0);
  for (const auto& ring : g.cp) {
    for (std::size_t i = 0; i < ring.size(); ++i)
      c.cp_next_of[static_cast<std::size_t>(ring[i])] = ring[(i + 1) % ring.size()];
  }
  for (const auto& pipe : g.pipelines) {
    const std::size_t n = pipe.size();
    for (std::size_t i = 0; i < n; ++i) {
      c.next_of[static_cast<std::size_t>(pipe[i])] = pipe[(i + 1) % n];
      c.prev_of[static_cast<std::size_t>(pipe[i])] = pipe[(i + n - 1) % n];
    }
  }
  return c;
}

PipelineOptions pipeline_options(const Scenario& s, const SimProfile& prof, const Ctx& c) {
  const ParallelLayout& par = s.parallel;
  PipelineOptions popt;
  // A full-iteration graph holds no device sync: Megatron's batch_p2p_sync cannot run inside it.
  popt.p2p_device_sync = prof.p2p_device_sync && s.training.cuda_graphs != CudaGraphs::full_iteration;
  // Without a pipeline a single microbatch has no other to pair with (F0 B0 run apart).
  popt.combine_steady_steps = c.combined && !(par.pp == 1 && c.m < 2);
  // overlap_p2p_comm: posted isend/irecv, no batched call, so batch_p2p_sync never runs (schedule.hpp).
  popt.p2p_mode = overlap_p2p_comm(s) ? P2pMode::overlapped : P2pMode::blocking;
  return popt;
}

// The stage programs as emitted (before the MoE costs): from the cache when an earlier build emitted the
// same (workload_template_cache.hpp), else emitted here (and kept for the next build when cached).
struct EmittedStages {
  std::shared_ptr<const WorkloadTemplate> shared;
  std::vector<StageTemplate> own;  // when not shared
};
EmittedStages emitted_stages(const Ctx& c, const PipelineOptions& popt, const WorkloadSeams& seams) {
  EmittedStages e;
  if (seams.programs != nullptr && seams.compute != nullptr && seams.comm != nullptr) {
    WorkloadTemplateKey key = template_key(c.s, c.prof, seams);
    e.shared = seams.programs->find(key);
    if (!e.shared) {
      e.own = emit_stages(c, popt);
      // Kept only within the cache's bound (workload_template_cache.hpp: a kept template is a second copy
      // of the programs in memory); a larger one is priced in place below, as the plain build's.
      if (seams.programs->admits(template_bytes(e.own))) {
        auto t = std::make_shared<WorkloadTemplate>();
        t->key = std::move(key);
        t->comm_owner = seams.comm;
        t->stages = std::move(e.own);
        e.own.clear();
        e.shared = t;
        seams.programs->insert(e.shared);
      } else {
        seams.programs->count_refused();
      }
    }
  } else {
    e.own = emit_stages(c, popt);
  }
  return e;
}

// Flow-model loads of the pipeline P2P and the A2As (collectives got theirs when added); the A2A's from
// the stage's first rank's MoE costs of that layer and microbatch. An A2A keeps one flow per other node
// of the EP group on the rails (DeepEP: one RDMA stream per remote node; NCCL: the pair of NVLink
// domains' copies aggregated per rail), one per other GPU of its NVLink reach on NVLink.
void set_net_loads(Program& prog, const StageTemplate& st, const moe_pricing::StageMoeCosts& costs,
                   const std::vector<int>& first_ep, int reach) {
  const int a2a_network_flows = nodes_spanned(first_ep, reach) - 1;
  const int a2a_nvlink_flows =
      static_cast<int>(std::count_if(first_ep.begin(), first_ep.end(),
                                     [&](int rank) { return rank / reach == first_ep.front() / reach; })) -
      1;
  for (int i = 0; i < prog.size(); ++i) {
    const OpSpec& o = prog.ops()[static_cast<std::size_t>(i)];
    if (o.kind != OpKind::comm || o.net_load >= 0) continue;
    std::optional<NetLoad> load;
    if (is_pipeline(o.channel)) {
      load = st.p2p_loads[static_cast<std::size_t>(o.channel)];
    } else if (o.var_slot >= 0) {
      const VarReq& r = st.vars[static_cast<std::size_t>(o.var_slot)];
      if (r.kind == VarKind::dispatch || r.kind == VarKind::combine) {
        const MoeRankCost& mc = costs.at(static_cast<std::size_t>(r.moe), static_cast<std::size_t>(r.mb), 0);
        load = r.kind == VarKind::dispatch
                   ? net_load_of(mc.dispatch_ns + (r.fold ? mc.permute_ns : 0), mc.dispatch_latency_ns,
                                 mc.dispatch_nvlink_s, mc.dispatch_network_s, true, true, a2a_network_flows,
                                 a2a_nvlink_flows)
                   : net_load_of(mc.combine_ns + (r.fold ? mc.unpermute_ns : 0), mc.combine_latency_ns,
                                 mc.combine_nvlink_s, mc.combine_network_s, true, true, a2a_network_flows,
                                 a2a_nvlink_flows);
      }
    }
    if (load) prog.op(i).net_load = prog.net_load(*load);
  }
}

// Per-rank durations of the stage's var slots, appended to the workload: one row of durations per class
// of equal ranks (moe_pricing::duration_classes), shared by the class's ranks through var_offset, so the
// work and memory grow with the classes, not with the stage's ranks. `var_total`: the rows so far.
void add_var_durations(Workload& w, const StageTemplate& st, const moe_pricing::StageMoeCosts& costs,
                       const moe_pricing::ExpertGemms& gemms, int stage, int S, std::int64_t& var_total) {
  const std::vector<std::int32_t> cls = moe_pricing::duration_classes(st.comm, costs.table, S);
  std::vector<std::int64_t> class_offset;
  for (int local = 0; local < S; ++local) {
    const int rank = stage * S + local;
    w.rank_program[static_cast<std::size_t>(rank)] = static_cast<std::int32_t>(w.programs.size());
    const auto k = static_cast<std::size_t>(cls[static_cast<std::size_t>(local)]);
    if (k < class_offset.size()) {
      w.var_offset[static_cast<std::size_t>(rank)] = class_offset[k];
      continue;
    }
    class_offset.push_back(var_total);
    w.var_offset[static_cast<std::size_t>(rank)] = var_total;
    for (const VarReq& r : st.vars) {
      TimeNs v = 0;
      if (r.kind == VarKind::comm) {
        const CommEntry& e = st.comm[static_cast<std::size_t>(r.comm)];
        v = e.uniform ? e.value : e.per_local[static_cast<std::size_t>(local)];
      } else {
        v = moe_pricing::moe_duration(
            r,
            costs.at(static_cast<std::size_t>(r.moe), static_cast<std::size_t>(r.mb),
                     static_cast<std::size_t>(local)),
            gemms);
      }
      w.var_durations.push_back(v);
    }
    var_total += static_cast<std::int64_t>(st.vars.size());
  }
}

}  // namespace

BuiltWorkload build_workload(const Scenario& s, const SimProfile& fitted, const WorkloadSeams& seams,
                             int threads) {
  // Host time per op scales with the instance CPU's single-thread speed relative to the CPU the host
  // terms were fitted (or measured) on.
  const SimProfile prof = host_scaled(fitted, s.instance);
  BuiltWorkload out;
  const ParallelLayout& par = s.parallel;
  out.microbatches = checked_microbatches(s);
  // Refused before anything is allocated when it would not fit (workload_estimate.hpp).
  check_workload_size(s, estimate_workload(s), workload_limit_bytes());
  out.layout = make_pipeline_layout(s.model, par, InputLocation{s.source, 0});
  out.groups = megatron_rank_groups(par, s.instance.gpus, a2a_nvlink_reach_gpus(s));
  out.compute = seams.compute != nullptr ? *seams.compute : ComputeProfile::from_gpu(s.gpu);
  if (!(prof.compute_time_scale > 0 && prof.collective_time_scale > 0))
    throw std::logic_error("build_workload: fitted time scales must be > 0");
  // Scales every catalog roofline time (compute- and memory-bound) by the factor; measured GEMM curves
  // keep their times.
  scale_catalog_kernel_time(out.compute, prof.compute_time_scale);
  std::shared_ptr<const CommCostModel> comm = seams.comm;
  if (!comm) comm = std::make_shared<TopologyComm>(s);
  // The dispatcher's cost, mechanism to fitted layers (models/dispatcher_cost.hpp): the scenario's
  // mechanism (predict()'s routing plans and dispatcher model) or the balanced NCCL default on the unscaled
  // collective model; `fitted`'s host reference, not the scaled copy's.
  std::shared_ptr<const MoeCostModel> mechanism = seams.moe;
  if (!mechanism)
    mechanism =
        std::make_shared<BalancedMoeCost>(s, comm, out.compute, static_cast<std::uint16_t>(prof.nccl_sms));
  DispatcherCost dispatcher = dispatcher_cost(s, dispatcher_fit(fitted, s), std::move(mechanism));
  const std::shared_ptr<const MoeCostModel> moe = std::move(dispatcher.moe);
  out.a2a_source = std::move(dispatcher.source);
  if (prof.collective_time_scale != 1)
    comm = std::make_shared<ScaledCommCost>(comm, prof.collective_time_scale);
  out.comm_model = comm->name();
  out.moe_model = moe->name();

  const Ctx c = make_ctx(s, prof, out, *comm, *moe);
  const RankGroups& g = out.groups;
  Workload& w = out.workload;
  w.sms = out.compute.sms;
  w.init_ranks(g.world);
  w.stream_names = pipeline_stream_names();
  const int S = g.stage_size;
  std::int64_t var_total = 0;
  EmittedStages emitted = emitted_stages(c, pipeline_options(s, prof, c), seams);
  const std::shared_ptr<const WorkloadTemplate>& shared = emitted.shared;
  std::vector<std::shared_ptr<const CompiledProgram>> compiled;  // by stage, when shared
  for (int stage = 0; stage < par.pp; ++stage) {
    const auto si = static_cast<std::size_t>(stage);
    // The plain build prices the program it emitted; a shared template's is copied first.
    const StageTemplate& st = shared ? shared->stages[si] : emitted.own[si];
    Program prog = shared ? shared->stages[si].program : std::move(emitted.own[si].program);
    // MoE costs of every (MoE layer on this stage, microbatch) for every local rank.
    const moe_pricing::StageMoeCosts costs =
        moe_pricing::price_stage(*moe, g, st.moe_layers, stage, out.microbatches, threads);
    for (std::int32_t op : st.a2a_ops) prog.op(op).sms = costs.sms;
    set_net_loads(prog, st, costs, *c.ep_of[static_cast<std::size_t>(stage * S)], g.a2a_reach_gpus);
    for (std::size_t i = 0; i < st.vars.size(); ++i) prog.new_var_slot();
    prog.seal(kStreams);
    // A shared template's priced programs compile alike but for the A2A ops' SMs (StageTemplate::compiled):
    // the engine copies the kept compiled form instead of compiling (docs/2026-12-04-plan-speed.md,
    // session 43).
    if (shared) {
      if (!st.compiled) {
        st.compiled = compile_program(prog);
      } else if (!st.a2a_ops.empty() && st.compiled_sms != costs.sms) {
        st.compiled = recompile_sms(*st.compiled, prog, st.a2a_ops);
      }
      st.compiled_sms = costs.sms;
      compiled.push_back(st.compiled);
    }
    add_var_durations(w, st, costs, moe_pricing::expert_gemms(s, out.compute, st.local_experts), stage, S,
                      var_total);
    w.programs.push_back(std::move(prog));
  }
  w.add_group_channels(ChannelKind::tp, g.tp);
  w.add_group_channels(ChannelKind::dp, g.dp);
  w.add_group_channels(ChannelKind::ep, g.ep);
  w.add_group_channels(ChannelKind::etp, g.etp);
  w.add_group_channels(ChannelKind::edp, g.edp);
  for (const auto& pipe : g.pipelines) w.add_pipeline_channels(pipe);
  if (s.training.cpu_offload_layers >
      0) {  // each rank's own copies to and from host memory (cpu_offload.hpp)
    std::vector<std::vector<int>> alone;
    for (int r = 0; r < g.world; ++r) alone.push_back({r});
    w.add_group_channels(ChannelKind::host, alone);
  }
  w.compiled = std::move(compiled);
  w.validate();
  return out;
}

}  // namespace moetwin
