#include "moetwin/sim/schedule.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "moetwin/common/concat.hpp"

namespace moetwin {

std::vector<std::pair<int, int>> interleaved_schedule_table(int microbatches, int vpp, int group_size) {
  std::vector<std::pair<int, int>> table;
  table.reserve(static_cast<std::size_t>(microbatches) * static_cast<std::size_t>(vpp));
  for (int first = 0; first < microbatches; first += group_size) {
    const int last = first + group_size >= microbatches ? microbatches : first + group_size;
    for (int chunk = 0; chunk < vpp; ++chunk) {
      for (int mb = first; mb < last; ++mb) table.emplace_back(mb, chunk);
    }
  }
  return table;
}

int warmup_microbatches(int pp, int vpp, int microbatches, int stage, bool combined_1f1b) {
  if (vpp == 1) return std::min(pp - stage - 1, microbatches);
  const int total = microbatches * vpp;
  // Megatron-Core schedules.py: overlap_moe_expert_parallel_comm adds one warm-up forward so that the
  // forward and backward merged in a steady step never belong to the same microbatch and chunk
  // (nvidia-mechanisms.md section 2).
  const int warmup = (pp - stage - 1) * 2 + (vpp - 1) * pp + (combined_1f1b ? 1 : 0);
  return std::min(warmup, total);
}

namespace {

struct Builder {
  int pp, vpp, m, stage;
  P2pMode mode = P2pMode::blocking;
  std::vector<PipeAction> out;
  bool combined_1f1b = false;

  bool first_stage() const { return stage == 0; }
  bool last_stage() const { return stage == pp - 1; }

  void forward(int mb, int chunk) {
    out.push_back(PipeAction{PipeActionKind::forward, mb, chunk, {}, {}, {}, {}});
  }
  void backward(int mb, int chunk) {
    out.push_back(PipeAction{PipeActionKind::backward, mb, chunk, {}, {}, {}, {}});
  }
  // One batched P2P call; received tensors go to the queue of chunk recv_fwd_chunk / recv_bwd_chunk.
  void p2p(bool send_fwd, bool recv_fwd, bool send_bwd, bool recv_bwd, int recv_fwd_chunk = 0,
           int recv_bwd_chunk = 0, bool posted = false) {
    PipeAction a;
    a.kind = PipeActionKind::p2p;
    a.posted = posted;
    a.send_fwd.active = send_fwd;
    a.recv_fwd.active = recv_fwd;
    a.recv_fwd.chunk = recv_fwd_chunk;
    a.send_bwd.active = send_bwd;
    a.recv_bwd.active = recv_bwd;
    a.recv_bwd.chunk = recv_bwd_chunk;
    if (!a.empty_p2p()) out.push_back(a);
  }
  // One posted call of overlap_p2p_comm (isend/irecv returning their handles).
  void post(bool send_fwd, bool recv_fwd, bool send_bwd, bool recv_bwd, int recv_fwd_chunk,
            int recv_bwd_chunk) {
    p2p(send_fwd, recv_fwd, send_bwd, recv_bwd, recv_fwd_chunk, recv_bwd_chunk, true);
  }

  void non_interleaved() {
    const int warmup = warmup_microbatches(pp, 1, m, stage);
    const int remaining = m - warmup;
    const bool first = first_stage(), last = last_stage();
    for (int i = 0; i < warmup; ++i) {
      p2p(false, !first, false, false);  // recv_forward
      forward(i, 0);
      p2p(!last, false, false, false);  // send_forward
    }
    if (remaining > 0) p2p(false, !first, false, false);
    for (int i = 0; i < remaining; ++i) {
      forward(warmup + i, 0);
      p2p(!last, false, false, !last);  // send_forward_recv_backward
      backward(i, 0);
      if (i == remaining - 1) {
        p2p(false, false, !first, false);  // send_backward
      } else {
        p2p(false, !first, !first, false);  // send_backward_recv_forward
      }
    }
    for (int i = 0; i < warmup; ++i) {
      p2p(false, false, false, !last);  // recv_backward
      backward(remaining + i, 0);
      p2p(false, false, !first, false);  // send_backward
    }
  }

  void interleaved() {
    const int total = m * vpp;
    const auto table = interleaved_schedule_table(m, vpp, pp);
    auto chunk_of = [&](int k, bool fwd) {
      const int idx = ((k % total) + total) % total;
      const int c = table[static_cast<std::size_t>(idx)].second;
      return fwd ? c : vpp - 1 - c;
    };
    auto mb_of = [&](int k) { return table[static_cast<std::size_t>(k)].first; };
    const int warmup = warmup_microbatches(pp, vpp, m, stage, combined_1f1b);
    const bool all_warmup = warmup >= total;
    const int remaining = total - warmup;
    const bool first = first_stage(), last = last_stage();
    // Virtual first/last stage: (stage 0, chunk 0) has no input, (last stage, last chunk) no output.
    auto virt_first = [&](int chunk) { return first && chunk == 0; };
    auto virt_last = [&](int chunk) { return last && chunk == vpp - 1; };
    // Megatron's recv_tensor_from_previous_stage(virtual_microbatch_id, forward): whether the step after
    // k receives from the previous stage (next stage in backward), and for which chunk. The leading
    // stage (first in forward, last in backward) is ahead of the ending stage by pp - 1.
    auto recv_from_previous = [&](int k, bool fwd) -> std::pair<bool, int> {
      const bool leading = fwd ? first : last;
      const int last_chunk = fwd ? vpp - 1 : 0;
      if (!leading) return {true, chunk_of(k + 1, fwd)};
      if (k < pp - 1) return {false, chunk_of(k + 1, fwd)};
      int next = chunk_of(k - (pp - 1), fwd);
      const bool recv = next != last_chunk;
      next += fwd ? 1 : -1;
      return {recv, next};
    };

    p2p(false, !first, false, false, 0, 0);  // recv_forward for chunk 0 (a no-op on the first stage)
    for (int k = 0; k < warmup; ++k) {
      const int chunk = chunk_of(k, true);
      forward(mb_of(k), chunk);
      auto [recv_prev, next_chunk] = recv_from_previous(k, true);
      if (k == total - 1) recv_prev = false;
      const bool send = !virt_last(chunk);
      if (mode == P2pMode::overlapped) {
        // send_forward_recv_forward(overlap_p2p_comm=True); after the last warm-up forward,
        // send_backward_recv_backward(None, recv_next, overlap_p2p_comm=True) posts the first backward's
        // receive into the last chunk's queue.
        post(send, recv_prev, false, false, next_chunk, 0);
        if (k == warmup - 1 && !all_warmup) post(false, false, false, !last, 0, vpp - 1);
      } else if (k == warmup - 1 && !all_warmup) {
        // send_forward_backward_recv_forward_backward; the gradient goes to the last chunk's queue.
        p2p(send, recv_prev, false, !last, next_chunk, vpp - 1);
      } else {
        p2p(send, recv_prev, false, false, next_chunk, 0);  // send_forward_recv_forward
      }
    }
    for (int k = 0; k < remaining; ++k) {
      if (mode == P2pMode::overlapped) {
        // Forward, post [sf rf] (pp_post_forward), backward, post [sb rb] (pp_post_backward); which
        // transfers are active is decided as in the blocking step.
        const int fk = k + warmup;
        const int fchunk = chunk_of(fk, true);
        forward(mb_of(fk), fchunk);
        auto [recv_prev, next_f] = recv_from_previous(fk, true);
        if (k == remaining - 1) recv_prev = false;  // received before the loop
        post(!virt_last(fchunk), recv_prev, false, false, next_f, 0);
        const int bchunk = chunk_of(k, false);
        backward(mb_of(k), bchunk);
        const auto [recv_next, next_b] = recv_from_previous(k, false);
        post(false, false, !virt_first(bchunk), recv_next, 0, next_b);
        continue;
      }
      const int fk = k + warmup;
      const int fchunk = chunk_of(fk, true);
      forward(mb_of(fk), fchunk);
      const int bk = k;
      const int bchunk = chunk_of(bk, false);
      backward(mb_of(bk), bchunk);
      auto [recv_prev, next_f] = recv_from_previous(fk, true);
      auto [recv_next, next_b] = recv_from_previous(bk, false);
      // The last iteration does not receive: one extra was received before the loop.
      if (k == remaining - 1) recv_prev = false;
      p2p(!virt_last(fchunk), recv_prev, !virt_first(bchunk), recv_next, next_f, next_b);
    }
    if (all_warmup) p2p(false, false, false, !last, 0, vpp - 1);  // recv_backward
    for (int k = remaining; k < total; ++k) {
      const int chunk = chunk_of(k, false);
      backward(mb_of(k), chunk);
      auto [recv_next, next_chunk] = recv_from_previous(k, false);
      if (k == total - 1) recv_next = false;
      p2p(false, false, !virt_first(chunk), recv_next, 0, next_chunk);  // send_backward_recv_backward
    }
  }

  // Annotates transfers with the data they carry: a receive feeds the next step of its chunk that needs
  // one (Megatron's per-chunk input_tensors / output_tensor_grads queues); a send carries the output of
  // the step just before it.
  void annotate() {
    std::vector<std::deque<int>> fwd_in(static_cast<std::size_t>(vpp)), bwd_in(static_cast<std::size_t>(vpp));
    for (const PipeAction& a : out) {
      if (a.kind == PipeActionKind::forward && !(first_stage() && a.chunk == 0)) {
        fwd_in[static_cast<std::size_t>(a.chunk)].push_back(a.microbatch);
      }
      if (a.kind == PipeActionKind::backward && !(last_stage() && a.chunk == vpp - 1)) {
        bwd_in[static_cast<std::size_t>(a.chunk)].push_back(a.microbatch);
      }
    }
    auto take = [](std::vector<std::deque<int>>& q, PipeTransfer& t) {
      if (t.chunk < 0 || static_cast<std::size_t>(t.chunk) >= q.size() ||
          q[static_cast<std::size_t>(t.chunk)].empty()) {
        throw std::logic_error("schedule: a receive without a consumer");
      }
      t.microbatch = q[static_cast<std::size_t>(t.chunk)].front();
      q[static_cast<std::size_t>(t.chunk)].pop_front();
    };
    std::pair<int, int> last_fwd{-1, -1}, last_bwd{-1, -1};
    for (PipeAction& a : out) {
      if (a.kind == PipeActionKind::forward) last_fwd = {a.microbatch, a.chunk};
      if (a.kind == PipeActionKind::backward) last_bwd = {a.microbatch, a.chunk};
      if (a.kind != PipeActionKind::p2p) continue;
      if (a.send_fwd.active) {
        a.send_fwd.microbatch = last_fwd.first;
        a.send_fwd.chunk = last_fwd.second;
      }
      if (a.send_bwd.active) {
        a.send_bwd.microbatch = last_bwd.first;
        a.send_bwd.chunk = last_bwd.second;
      }
      if (a.recv_fwd.active) take(fwd_in, a.recv_fwd);
      if (a.recv_bwd.active) take(bwd_in, a.recv_bwd);
    }
    for (std::size_t c = 0; c < fwd_in.size(); ++c) {
      if (!fwd_in[c].empty() || !bwd_in[c].empty())
        throw std::logic_error("schedule: a step lacks its receive");
    }
  }
};

}  // namespace

const char* to_string(P2pMode mode) {
  return mode == P2pMode::overlapped ? "overlapped" : "blocking";
}

std::vector<PipeAction> pipeline_schedule(int pp, int vpp, int microbatches, int stage, P2pMode mode,
                                          bool combined_1f1b) {
  if (pp < 1 || vpp < 1 || microbatches < 1)
    throw std::invalid_argument("pipeline_schedule: sizes must be >= 1");
  if (stage < 0 || stage >= pp) throw std::invalid_argument("pipeline_schedule: stage out of range");
  if (vpp > 1 && pp == 1) throw std::invalid_argument("pipeline_schedule: vpp > 1 needs pp > 1");
  // Megatron: microbatch_group_size_per_vp_stage (= pp) must lie in [pp, num_microbatches].
  // Microbatches must come in whole groups of pp (Megatron-Core asserted this before
  // microbatch_group_size_per_vp_stage; the live runs all satisfy it). Ragged last groups: not modelled.
  if (vpp > 1 && microbatches % pp != 0) {
    throw std::invalid_argument("pipeline_schedule: vpp > 1 needs microbatches divisible by pp");
  }
  // Without interleaving Megatron turns overlap_p2p_comm off (schedule.hpp): 1F1B is always blocking.
  Builder b{pp, vpp, microbatches, stage, vpp > 1 ? mode : P2pMode::blocking, {}, combined_1f1b};
  if (vpp == 1) {
    b.non_interleaved();
  } else {
    b.interleaved();
  }
  b.annotate();
  return std::move(b.out);
}

std::vector<PipeAction> no_pipelining_combined_schedule(int microbatches) {
  if (microbatches < 1) throw std::invalid_argument("no_pipelining_combined_schedule: microbatches < 1");
  Builder b{1, 1, microbatches, 0, P2pMode::blocking, {}};
  b.forward(0, 0);
  for (int i = 1; i < microbatches; ++i) {
    b.forward(i, 0);
    b.backward(i - 1, 0);
  }
  b.backward(microbatches - 1, 0);
  b.annotate();
  return std::move(b.out);
}

std::string describe(const std::vector<PipeAction>& actions) {
  std::string s;
  for (const PipeAction& a : actions) {
    if (!s.empty()) s += ' ';
    switch (a.kind) {
      case PipeActionKind::forward:
        // Not "F" + std::to_string(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
        s += concat({"F", std::to_string(a.microbatch), ".", std::to_string(a.chunk)});
        break;
      case PipeActionKind::backward:
        s += concat({"B", std::to_string(a.microbatch), ".", std::to_string(a.chunk)});
        break;
      case PipeActionKind::p2p: {
        s += a.posted ? "A[" : "P[";
        std::string in;
        if (a.send_fwd.active) in += "sf";
        if (a.recv_fwd.active) in += in.empty() ? "rf" : " rf";
        if (a.send_bwd.active) in += in.empty() ? "sb" : " sb";
        if (a.recv_bwd.active) in += in.empty() ? "rb" : " rb";
        s += in + "]";
        break;
      }
    }
  }
  return s;
}

}  // namespace moetwin
