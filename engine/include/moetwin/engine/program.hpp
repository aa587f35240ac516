// The sealed input of the engine: per pipeline stage a Program (the ops one rank issues in one
// iteration, in host issue order), per rank the Program it runs, its communication channels and the
// durations that differ between ranks (expert GEMMs and all-to-alls under skewed routing).
//
// Ranks of one stage share the op sequence (Megatron runs the same kernels on every TP/EP/DP rank of a
// stage); everything that differs per rank lives in per-rank arrays (var slots, channels). The engine
// never assumes two ranks behave alike: each rank has its own state and events.
//
// Flat vectors indexed by id, no per-op heap allocation: 4096 ranks x ~25k ops must fit in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "moetwin/engine/duration_table.hpp"
#include "moetwin/engine/event_queue.hpp"

namespace moetwin {

class CompiledProgram;  // compiled_program.hpp

enum class OpKind : std::uint8_t { compute, comm };

// Which parallelism a communication op belongs to, for the exposed-communication breakdown.
enum class CommClass : std::uint8_t { tp, ep, pp, dp };
inline constexpr int kCommClasses = 4;
const char* to_string(CommClass cls);

// Host synchronisation after issuing an op: none; `op` = the host waits until this op has finished
// (a D2H copy such as the all-to-all dispatcher's token counts, .cpu()); `device` = the host waits until
// every op it issued so far has finished (torch.cuda.synchronize(), e.g. Megatron's batch_p2p_sync).
enum class HostSync : std::uint8_t { none, op, device };

// The channel a communication op rendezvouses on, relative to its rank. Members of a channel issue its
// ops in the same order (an NCCL requirement), each on one stream, so the k-th op of every member is
// the same collective instance.
enum class ChannelKind : std::uint8_t {
  tp,          // tensor-parallel group (SP all-gather / reduce-scatter)
  ep,          // expert-parallel group (token dispatch / combine)
  etp,         // expert-tensor-parallel group
  dp,          // data-parallel group of dense parameters (dp x cp)
  edp,         // expert-data-parallel group of expert parameters
  pp_fwd_out,  // this rank -> next stage (activations)
  pp_fwd_in,   // previous stage -> this rank (activations)
  pp_bwd_out,  // this rank -> previous stage (gradients)
  pp_bwd_in,   // next stage -> this rank (gradients)
  host,        // the rank alone: copies between its GPU and host memory (CPU offload), no peers to meet
  count
};
inline constexpr int kChannelKinds = static_cast<int>(ChannelKind::count);

// What an op is part of, for traces and the breakdown.
enum class OpPhase : std::uint8_t { forward, backward, recompute, optimizer, other };
const char* to_string(OpPhase phase);

inline constexpr int kNoOp = -1;

// The network links a comm op's member uses while the op transfers, in the flow model of the engine
// (EngineOptions::network). Each GPU has four: its NVLink port and its EFA rails, each direction
// (topology/cluster.hpp: the NVSwitch and the rail fabric are non-blocking, so a GPU's own port and rails
// are where transfers of different collectives meet).
enum class NetRole : std::uint8_t { nvlink_tx, nvlink_rx, network_tx, network_rx };
inline constexpr int kNetRoles = 4;
const char* to_string(NetRole role);

// What a comm op asks of the network, for the flow model. Its duration (OpSpec::duration or the rank's
// var slot) is `latency` (handshakes, step latencies: time that uses no bandwidth) then a transfer; while
// the op transfers alone, it holds `use[role]` of the member's link of that role (1 = the whole link: the
// op's bottleneck under the closed form; a fitted slow-down leaves the link partly idle, < 1). With
// other ops on the same links, max-min fair sharing slows the transfer (engine.hpp).
struct NetLoad {
  TimeNs latency = 0;         // ns, >= 0, at most the op's duration (the engine clamps it)
  float use[kNetRoles] = {};  // fraction of each link, in [0, 1]
  // Flows the member keeps on its busiest link, aggregated per (node pair, rail) as `moetwin net` builds
  // them (an all-to-all: one per other node of its group; a ring hop or a send: one). A transfer's share of
  // a link it shares grows with it: the NICs share bandwidth per flow (SimGrid CM02's per-flow max-min),
  // and one rate per transfer with weight = flows gives the transfer what its flows would get together.
  std::uint16_t flows = 1;  // >= 1
  bool operator==(const NetLoad& other) const;
};

// One op of a stage program. 48 bytes.
struct OpSpec {
  TimeNs duration = 0;  // compute: ns at the full SM share; comm: ns once all members are in.
                        // Ignored when var_slot >= 0 (the rank's own duration is used).
  std::int32_t deps[2] = {kNoOp, kNoOp};  // program indices on the same rank that must finish first
                                          // (besides the order of the op's own stream)
  std::int32_t var_slot = -1;             // index into the rank's per-rank durations, or -1
  std::int32_t label = 0;                 // index into Program::labels
  std::int32_t host_ns = 0;               // host time to issue it (launches x per-launch cost), ns
  std::int32_t microbatch = -1;           // for traces; -1 = none
  std::int32_t net_load = -1;             // comm: index into Program::net_loads, -1 = none (fixed time)
  std::int16_t chunk = -1;                // virtual chunk, -1 = none
  std::uint16_t sms = 0;                  // comm: SMs its kernel occupies while it runs (slows compute)
  std::uint8_t stream = 0;                // stream on the rank (0 = compute stream)
  OpKind kind = OpKind::compute;
  CommClass comm_class = CommClass::tp;
  ChannelKind channel = ChannelKind::tp;
  HostSync sync = HostSync::none;
  OpPhase phase = OpPhase::other;
};

// The ops of one pipeline stage, in host issue order. Derived index arrays are filled by seal().
class Program {
 public:
  int add(const OpSpec& op);         // returns the program index; logic_error once sealed
  int label(std::string_view name);  // interned label id (no string built per op: a few dozen labels)
  void reserve(std::size_t ops) { ops_.reserve(ops); }  // capacity only: spares the op vector's regrowth
  int net_load(const NetLoad& load);                    // interned load id (OpSpec::net_load)
  void seal(int streams);                               // validates deps/streams, builds the derived arrays
  bool sealed() const { return sealed_; }

  const std::vector<OpSpec>& ops() const { return ops_; }
  OpSpec& op(int index);  // logic_error once sealed
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<NetLoad>& net_loads() const { return net_loads_; }
  int streams() const { return streams_; }
  int size() const { return static_cast<int>(ops_.size()); }
  int var_slots() const { return var_slots_; }
  int new_var_slot() { return var_slots_++; }

  // Derived (sealed): cumulative host issue time up to and including op i; position of op i in its
  // stream; ops per stream. (Only what the engine's compile and the trace read: seal runs once per
  // replayed stage program, so a derived array nobody reads is a cost per replay.)
  const std::vector<TimeNs>& issue_prefix() const { return issue_prefix_; }
  const std::vector<std::int32_t>& pos_in_stream() const { return pos_in_stream_; }
  const std::vector<std::int32_t>& stream_sizes() const { return stream_sizes_; }

 private:
  std::vector<OpSpec> ops_;
  std::vector<std::string> labels_;
  std::vector<NetLoad> net_loads_;
  int streams_ = 0;
  int var_slots_ = 0;
  bool sealed_ = false;
  std::vector<TimeNs> issue_prefix_;
  std::vector<std::int32_t> pos_in_stream_;
  std::vector<std::int32_t> stream_sizes_;
};

// A whole iteration: programs, ranks, channels. Build, then seal(); the engine reads it only.
struct Workload {
  std::vector<Program> programs;
  std::vector<std::int32_t> rank_program;  // rank -> index into programs
  // rank * kChannelKinds + kind -> channel id, -1 when the rank has none of that kind.
  std::vector<std::int32_t> rank_channels;
  std::vector<std::int32_t> channel_size;  // channel id -> members
  // Per-rank durations of var-slot ops: rank r's slot s is var_durations[var_offset[r] + s].
  std::vector<std::int64_t> var_offset;
  DurationTable var_durations;
  int sms = 132;                          // SMs per GPU (compute progresses at (sms - stolen) / sms)
  std::vector<std::string> rank_names;    // optional, for traces ("rank 12 (pp1 tp4 dp0)")
  std::vector<std::string> stream_names;  // optional, by stream id, for traces ("compute", "ep-comm")
  // Flow model only: rank * kNetRoles + role -> link id, for GPUs that share a link (two GPUs on one NIC).
  // Empty: every rank has four links of its own, ids rank * kNetRoles + role.
  std::vector<std::int32_t> net_links;
  // Optional, by program: the program's compiled form, made by whoever built the workload and shared with
  // other workloads (compiled_program.hpp); the engine copies it instead of compiling the program. Empty,
  // or a null entry: the engine compiles.
  std::vector<std::shared_ptr<const CompiledProgram>> compiled;

  int ranks() const { return static_cast<int>(rank_program.size()); }
  std::size_t total_ops() const;
  // Sizes the per-rank arrays for n ranks: program 0, no channels, var offset 0.
  void init_ranks(int n);
  // One channel per group (members = global ranks); sets each member's channel of `kind`.
  void add_group_channels(ChannelKind kind, const std::vector<std::vector<int>>& groups);
  // The ring links of one pipeline (its ranks in stage order): activations stage s -> s+1 (mod pp) on
  // pp_fwd_out/pp_fwd_in, gradients s+1 -> s on pp_bwd_out/pp_bwd_in. Nothing for pp == 1.
  void add_pipeline_channels(const std::vector<int>& stage_ranks);
  // The link of `rank`'s `role` in the flow model.
  std::int32_t net_link(int rank, NetRole role) const {
    const std::int32_t id = rank * kNetRoles + static_cast<int>(role);
    return net_links.empty() ? id : net_links[static_cast<std::size_t>(id)];
  }
  // Checks sizes, channel membership counts and that every program is sealed; logic_error otherwise.
  void validate() const;
};

}  // namespace moetwin
