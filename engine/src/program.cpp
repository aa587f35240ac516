#include "moetwin/engine/program.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace moetwin {

const char* to_string(CommClass cls) {
  switch (cls) {
    case CommClass::tp:
      return "tp";
    case CommClass::ep:
      return "ep";
    case CommClass::pp:
      return "pp";
    case CommClass::dp:
      return "dp";
  }
  return "?";
}

const char* to_string(OpPhase phase) {
  switch (phase) {
    case OpPhase::forward:
      return "forward";
    case OpPhase::backward:
      return "backward";
    case OpPhase::recompute:
      return "recompute";
    case OpPhase::optimizer:
      return "optimizer";
    case OpPhase::other:
      return "other";
  }
  return "?";
}

const char* to_string(NetRole role) {
  switch (role) {
    case NetRole::nvlink_tx:
      return "nvlink-tx";
    case NetRole::nvlink_rx:
      return "nvlink-rx";
    case NetRole::network_tx:
      return "network-tx";
    case NetRole::network_rx:
      return "network-rx";
  }
  return "?";
}

bool NetLoad::operator==(const NetLoad& other) const {
  return latency == other.latency && flows == other.flows && std::equal(use, use + kNetRoles, other.use);
}

int Program::net_load(const NetLoad& load) {
  if (sealed_) throw std::logic_error("Program::net_load after seal");
  if (load.latency < 0) throw std::logic_error("Program::net_load: negative latency");
  if (load.flows < 1) throw std::logic_error("Program::net_load: flows < 1");
  for (const float u : load.use) {
    if (!(u >= 0 && u <= 1)) throw std::logic_error("Program::net_load: link use outside [0, 1]");
  }
  // A program holds a few dozen distinct loads (one per collective shape and MoE cost class).
  for (std::size_t i = 0; i < net_loads_.size(); ++i) {
    if (net_loads_[i] == load) return static_cast<int>(i);
  }
  net_loads_.push_back(load);
  return static_cast<int>(net_loads_.size()) - 1;
}

int Program::add(const OpSpec& op) {
  if (sealed_) throw std::logic_error("Program::add after seal");
  ops_.push_back(op);
  return static_cast<int>(ops_.size()) - 1;
}

OpSpec& Program::op(int index) {
  if (sealed_) throw std::logic_error("Program::op (mutable) after seal");
  return ops_.at(static_cast<std::size_t>(index));
}

int Program::label(std::string_view name) {
  // Linear search is fine: a program has a few dozen distinct labels, built once.
  for (std::size_t i = 0; i < labels_.size(); ++i) {
    if (labels_[i] == name) return static_cast<int>(i);
  }
  labels_.emplace_back(name);
  return static_cast<int>(labels_.size()) - 1;
}

void Program::seal(int streams) {
  if (sealed_) return;
  if (streams < 1 || streams > 255) throw std::logic_error("Program::seal: streams out of range");
  streams_ = streams;
  const std::size_t n = ops_.size();
  issue_prefix_.resize(n);
  pos_in_stream_.resize(n);
  stream_sizes_.assign(static_cast<std::size_t>(streams), 0);
  TimeNs prefix = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const OpSpec& op = ops_[i];
    if (op.stream >= streams) throw std::logic_error("Program::seal: op stream out of range");
    if (op.duration < 0 || op.host_ns < 0) throw std::logic_error("Program::seal: negative time");
    if (op.kind == OpKind::compute && op.stream != 0) {
      throw std::logic_error("Program::seal: compute ops run on stream 0");
    }
    if (op.var_slot >= var_slots_) throw std::logic_error("Program::seal: var slot out of range");
    if (op.net_load >= static_cast<int>(net_loads_.size()) || (op.net_load >= 0 && op.kind != OpKind::comm)) {
      throw std::logic_error("Program::seal: net load out of range or on a compute op");
    }
    for (int d : op.deps) {
      if (d != kNoOp && (d < 0 || static_cast<std::size_t>(d) >= i)) {
        throw std::logic_error("Program::seal: a dependency must be an earlier op");
      }
    }
    prefix += op.host_ns;
    issue_prefix_[i] = prefix;
    pos_in_stream_[i] = stream_sizes_[op.stream]++;
  }
  sealed_ = true;
}

std::size_t Workload::total_ops() const {
  std::size_t total = 0;
  for (std::int32_t p : rank_program) total += programs.at(static_cast<std::size_t>(p)).ops().size();
  return total;
}

void Workload::init_ranks(int n) {
  rank_program.assign(static_cast<std::size_t>(n), 0);
  rank_channels.assign(static_cast<std::size_t>(n) * kChannelKinds, -1);
  var_offset.assign(static_cast<std::size_t>(n), 0);
}

namespace {
std::int32_t& channel_slot(Workload& w, int rank, ChannelKind kind) {
  return w.rank_channels.at(static_cast<std::size_t>(rank) * kChannelKinds + static_cast<std::size_t>(kind));
}
}  // namespace

void Workload::add_group_channels(ChannelKind kind, const std::vector<std::vector<int>>& groups) {
  for (const auto& g : groups) {
    const auto id = static_cast<std::int32_t>(channel_size.size());
    channel_size.push_back(static_cast<std::int32_t>(g.size()));
    for (int rank : g) channel_slot(*this, rank, kind) = id;
  }
}

void Workload::add_pipeline_channels(const std::vector<int>& stage_ranks) {
  const std::size_t pp = stage_ranks.size();
  if (pp < 2) return;
  for (std::size_t s = 0; s < pp; ++s) {
    const int from = stage_ranks[s];
    const int to = stage_ranks[(s + 1) % pp];
    auto fwd = static_cast<std::int32_t>(channel_size.size());
    channel_size.push_back(2);
    channel_slot(*this, from, ChannelKind::pp_fwd_out) = fwd;
    channel_slot(*this, to, ChannelKind::pp_fwd_in) = fwd;
    auto bwd = static_cast<std::int32_t>(channel_size.size());
    channel_size.push_back(2);
    channel_slot(*this, to, ChannelKind::pp_bwd_out) = bwd;
    channel_slot(*this, from, ChannelKind::pp_bwd_in) = bwd;
  }
}

void Workload::validate() const {
  const std::size_t r = rank_program.size();
  if (rank_channels.size() != r * kChannelKinds) throw std::logic_error("Workload: rank_channels size");
  if (var_offset.size() != r) throw std::logic_error("Workload: var_offset size");
  if (sms < 1) throw std::logic_error("Workload: sms < 1");
  if (!net_links.empty() && net_links.size() != r * kNetRoles)
    throw std::logic_error("Workload: net_links size");
  for (const std::int32_t l : net_links) {
    if (l < 0) throw std::logic_error("Workload: negative net link id");
  }
  for (const Program& p : programs) {
    if (!p.sealed()) throw std::logic_error("Workload: program not sealed");
  }
  if (!compiled.empty() && compiled.size() != programs.size())
    throw std::logic_error("Workload: compiled programs not one per program");
  // Every member of a channel must hold the same number of ops on it, or the engine would deadlock.
  std::vector<std::int64_t> member_refs(channel_size.size(), 0);
  std::vector<std::int64_t> ops_on(channel_size.size(), -1);
  // Comm ops per channel kind of each program, counted once per program (thousands of ranks share a
  // few programs): [program * kChannelKinds + kind], -1 = not counted yet.
  std::vector<std::int64_t> program_counts(programs.size() * kChannelKinds, -1);
  for (std::size_t rank = 0; rank < r; ++rank) {
    const auto pi = static_cast<std::size_t>(rank_program[rank]);
    const Program& prog = programs.at(pi);
    if (var_offset[rank] < 0 ||
        static_cast<std::size_t>(var_offset[rank]) + static_cast<std::size_t>(prog.var_slots()) >
            var_durations.size()) {
      throw std::logic_error("Workload: var_offset out of range");
    }
    std::int64_t* counts = program_counts.data() + pi * kChannelKinds;
    if (counts[0] < 0) {
      std::fill(counts, counts + kChannelKinds, 0);
      int stream_of[kChannelKinds];
      for (int& s : stream_of) s = -1;
      for (const OpSpec& op : prog.ops()) {
        if (op.kind != OpKind::comm) continue;
        const int k = static_cast<int>(op.channel);
        ++counts[k];
        // One stream per channel on a rank: then the k-th arrival of every member is the same instance.
        if (stream_of[k] >= 0 && stream_of[k] != op.stream) {
          throw std::logic_error("Workload: ops of one channel on two streams");
        }
        stream_of[k] = op.stream;
      }
    }
    for (int k = 0; k < kChannelKinds; ++k) {
      const std::int32_t ch = rank_channels[rank * kChannelKinds + static_cast<std::size_t>(k)];
      if (ch < 0) {
        if (counts[k] != 0) throw std::logic_error("Workload: comm op on a channel the rank lacks");
        continue;
      }
      const auto c = static_cast<std::size_t>(ch);
      if (c >= channel_size.size()) throw std::logic_error("Workload: channel id out of range");
      ++member_refs[c];
      if (ops_on[c] < 0) ops_on[c] = counts[k];
      if (ops_on[c] != counts[k]) {
        throw std::logic_error("Workload: members of channel " + std::to_string(ch) +
                               " hold different numbers of ops");
      }
    }
  }
  for (std::size_t c = 0; c < channel_size.size(); ++c) {
    if (member_refs[c] != channel_size[c]) {
      throw std::logic_error("Workload: channel " + std::to_string(c) + " has " +
                             std::to_string(member_refs[c]) + " members, expected " +
                             std::to_string(channel_size[c]));
    }
  }
}

}  // namespace moetwin
