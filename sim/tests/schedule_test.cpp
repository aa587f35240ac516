#include "moetwin/sim/schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

TEST(Schedule, OneF1BWarmupCounts) {
  EXPECT_EQ(warmup_microbatches(4, 1, 8, 0), 3);
  EXPECT_EQ(warmup_microbatches(4, 1, 8, 3), 0);
  EXPECT_EQ(warmup_microbatches(4, 1, 2, 0), 2);  // capped at m
  // Interleaved: (pp - stage - 1) * 2 + (vpp - 1) * pp, capped at m * vpp.
  EXPECT_EQ(warmup_microbatches(4, 2, 8, 0), 10);
  EXPECT_EQ(warmup_microbatches(4, 2, 8, 3), 4);
  EXPECT_EQ(warmup_microbatches(4, 2, 4, 0), 8);  // == total: all forwards first
}

TEST(Schedule, OneF1BOrderMatchesMegatron) {
  // pp 2, m 3, stage 0: warm-up 1 forward, then 1F1B, then 1 cool-down backward.
  EXPECT_EQ(describe(pipeline_schedule(2, 1, 3, 0)),
            "F0.0 P[sf] F1.0 P[sf rb] B0.0 F2.0 P[sf rb] B1.0 P[rb] B2.0");
  EXPECT_EQ(describe(pipeline_schedule(2, 1, 3, 1)),
            "P[rf] F0.0 B0.0 P[rf sb] F1.0 B1.0 P[rf sb] F2.0 B2.0 P[sb]");
  // No pipeline: forward_backward_no_pipelining order.
  EXPECT_EQ(describe(pipeline_schedule(1, 1, 3, 0)), "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0");
}

// Issue 52: EP A2A overlap with pp 1 (Megatron-Core's combined 1F1B in forward_backward_no_pipelining):
// F0, then F(i) beside B(i - 1), then the last backward. Each forward is followed by the backward it runs
// beside, so the workload pairs them (PipelineOptions::combine_steady_steps).
TEST(Schedule, NoPipeliningCombinedOrderMatchesMegatron) {
  EXPECT_EQ(describe(no_pipelining_combined_schedule(3)), "F0.0 F1.0 B0.0 F2.0 B1.0 B2.0");
  EXPECT_EQ(describe(no_pipelining_combined_schedule(1)), "F0.0 B0.0");
  EXPECT_THROW(no_pipelining_combined_schedule(0), std::invalid_argument);
}

TEST(Schedule, InterleavedTableGroupsOfPp) {
  // m 4, vpp 2, groups of 2: (0,0)(1,0)(0,1)(1,1)(2,0)(3,0)(2,1)(3,1).
  const auto t = interleaved_schedule_table(4, 2, 2);
  const std::vector<std::pair<int, int>> want = {{0, 0}, {1, 0}, {0, 1}, {1, 1},
                                                 {2, 0}, {3, 0}, {2, 1}, {3, 1}};
  EXPECT_EQ(t, want);
  // m not a multiple of the group: the last group takes the remainder (m 3, groups of 2). The schedule
  // itself refuses such m (see pipeline_schedule).
  const std::vector<std::pair<int, int>> want3 = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}};
  EXPECT_EQ(interleaved_schedule_table(3, 2, 2), want3);
}

TEST(Schedule, InterleavedOrderStage0) {
  // pp 2, vpp 2, m 4, stage 0: warm-up (2-0-1)*2 + 1*2 = 4 forwards in table order, then 1F1B with
  // backward chunks reversed.
  const auto a = pipeline_schedule(2, 2, 4, 0);
  std::string steps;
  for (const auto& x : a) {
    if (x.kind == PipeActionKind::p2p) continue;
    // Not "F" + std::to_string(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
    steps += concat({x.kind == PipeActionKind::forward ? "F" : "B", std::to_string(x.microbatch), ".",
                     std::to_string(x.chunk), " "});
  }
  EXPECT_EQ(steps, "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0 ");
}

// overlap_p2p_comm, worked by hand through Megatron-Core's forward_backward_pipelining_with_interleaving
// (pp 2, vpp 2, m 4; table (0,0)(1,0)(0,1)(1,1)(2,0)(3,0)(2,1)(3,1); backward chunks reversed).
// Stage 0, warm-up (2-0-1)*2 + (2-1)*2 = 4: no initial recv_forward (first stage); after each warm-up
// forward send_forward_recv_forward(overlap_p2p_comm=True): k 0 receives nothing (k < pp - 1), k 1 and 2
// receive (chunk_of(k - 1) = 0 is not the last chunk), k 3 not (chunk_of(2) = 1 is); after the last
// warm-up forward send_backward_recv_backward(None, recv_next=True) posts [rb]. Steady state (4 steps):
// F, [sf +rf unless chunk_of(fk - 1) == 1 or the last step], B, [sb unless chunk 0 on stage 0, rb]. Cool-down
// (blocking send_backward_recv_backward): B2.1 [sb rb], B3.1 [sb rb], B2.0 [rb], B3.0 (nothing: chunk 0
// sends no gradient, k == total - 1 receives none).
// Stage 1 (last), warm-up 2: blocking recv_forward, then [sf rf] twice (the [rb] posted after the last
// warm-up forward is empty on the last stage); its steady-state backwards receive from the "next" stage
// (stage 0, wrapping) only from k >= pp - 1 and not when chunk_of(k - 1, bwd) == 0.
TEST(Schedule, OverlappedInterleavedOrderMatchesMegatron) {
  EXPECT_EQ(
      describe(pipeline_schedule(2, 2, 4, 0, P2pMode::overlapped)),
      "F0.0 A[sf] F1.0 A[sf rf] F0.1 A[sf rf] F1.1 A[sf] A[rb] "
      "F2.0 A[sf] B0.1 A[sb rb] F3.0 A[sf rf] B1.1 A[sb rb] F2.1 A[sf rf] B0.0 A[rb] F3.1 A[sf] B1.0 A[rb] "
      "B2.1 P[sb rb] B3.1 P[sb rb] B2.0 P[rb] B3.0");
  EXPECT_EQ(
      describe(pipeline_schedule(2, 2, 4, 1, P2pMode::overlapped)),
      "P[rf] F0.0 A[sf rf] F1.0 A[sf rf] "
      "F0.1 A[rf] B0.1 A[sb] F1.1 A[rf] B1.1 A[sb rb] F2.0 A[sf rf] B0.0 A[sb rb] F3.0 A[sf rf] B1.0 A[sb] "
      "F2.1 A[rf] B2.1 A[sb] F3.1 B3.1 A[sb rb] B2.0 P[sb rb] B3.0 P[sb]");
  // The same steps in the same order as the blocking schedule, only the calls move: blocking puts one
  // call after each steady-state forward + backward pair.
  EXPECT_EQ(
      describe(pipeline_schedule(2, 2, 4, 0)),
      "F0.0 P[sf] F1.0 P[sf rf] F0.1 P[sf rf] F1.1 P[sf rb] F2.0 B0.1 P[sf sb rb] F3.0 B1.1 P[sf rf sb rb] "
      "F2.1 B0.0 P[sf rf rb] F3.1 B1.0 P[sf rb] B2.1 P[sb rb] B3.1 P[sb rb] B2.0 P[rb] B3.0");
  // pp 4, vpp 2, m 8, stage 3 (last): warm-up 0 * 2 + 1 * 4 = 4 forwards, each followed by a posted
  // [sf rf] (chunk 0 sends; all four receive); steady state starts with F0.1 (nothing to send from the
  // virtual last stage) and B0.1, whose [sb] has no receive (k < pp - 1 for the leading backward stage).
  const std::string s3 = describe(pipeline_schedule(4, 2, 8, 3, P2pMode::overlapped));
  const std::string want3 =
      "P[rf] F0.0 A[sf rf] F1.0 A[sf rf] F2.0 A[sf rf] F3.0 A[sf rf] F0.1 A[rf] B0.1 A[sb] F1.1 A[rf] B1.1 "
      "A[sb] ";
  EXPECT_EQ(s3.substr(0, want3.size()), want3);
  // vpp 1: overlap_p2p_comm does not apply (Megatron turns it off without interleaving).
  EXPECT_EQ(describe(pipeline_schedule(2, 1, 3, 0, P2pMode::overlapped)),
            describe(pipeline_schedule(2, 1, 3, 0)));
}

// Overlapped mode moves the calls only: per stage the same steps in the same order, and on every channel
// the same transfers (data and order) as the blocking schedule, whose pairing the test below checks.
TEST(Schedule, OverlappedKeepsTheStepsAndEachChannelsTransfers) {
  auto per_channel = [](const std::vector<PipeAction>& acts) {
    std::vector<std::vector<std::pair<int, int>>> ch(4);
    std::string steps;
    for (const auto& a : acts) {
      if (a.kind != PipeActionKind::p2p) {
        steps += concat({a.kind == PipeActionKind::forward ? "F" : "B", std::to_string(a.microbatch), ".",
                         std::to_string(a.chunk), " "});
        continue;
      }
      const PipeTransfer* t[4] = {&a.send_fwd, &a.recv_fwd, &a.send_bwd, &a.recv_bwd};
      for (std::size_t i = 0; i < 4; ++i) {
        if (t[i]->active) ch[i].emplace_back(t[i]->microbatch, t[i]->chunk);
      }
    }
    return std::make_pair(steps, ch);
  };
  for (int pp : {2, 3, 4, 8}) {
    for (int vpp : {2, 3, 4}) {
      for (int m : {pp, 2 * pp, 4 * pp}) {
        for (int s = 0; s < pp; ++s) {
          const auto blocking = pipeline_schedule(pp, vpp, m, s);
          const auto overlapped = pipeline_schedule(pp, vpp, m, s, P2pMode::overlapped);
          EXPECT_EQ(per_channel(blocking), per_channel(overlapped))
              << "pp " << pp << " vpp " << vpp << " m " << m << " stage " << s;
          for (const auto& a : blocking) EXPECT_FALSE(a.posted);
        }
      }
    }
  }
}

// Every send on a link pairs with the receive of the same data on the peer, in order, for many shapes, with
// and without the combined 1F1B's extra warm-up forward.
TEST(Schedule, SendsAndReceivesPairUpAcrossStages) {
  for (const bool combined : {false, true}) {
    for (int pp : {2, 3, 4, 8}) {
      for (int vpp : {1, 2, 3}) {
        for (int m : {1, 2, 3, 4, 5, 8, 12, 16}) {
          if (vpp > 1 && m % pp != 0) {
            EXPECT_THROW(pipeline_schedule(pp, vpp, m, 0), std::invalid_argument);
            continue;
          }
          std::vector<std::vector<PipeAction>> st;
          for (int s = 0; s < pp; ++s)
            st.push_back(pipeline_schedule(pp, vpp, m, s, P2pMode::blocking, combined));
          for (int s = 0; s < pp; ++s) {
            const int next = (s + 1) % pp;
            std::vector<std::pair<int, int>> sent_f, recv_f, sent_b, recv_b;
            for (const auto& a : st[static_cast<std::size_t>(s)]) {
              if (a.send_fwd.active) {
                // Wrap-around: the last stage's chunk c feeds stage 0's chunk c + 1.
                sent_f.emplace_back(a.send_fwd.microbatch, a.send_fwd.chunk + (s == pp - 1 ? 1 : 0));
              }
              if (a.recv_bwd.active)
                recv_b.emplace_back(a.recv_bwd.microbatch, a.recv_bwd.chunk + (s == pp - 1 ? 1 : 0));
            }
            for (const auto& a : st[static_cast<std::size_t>(next)]) {
              if (a.recv_fwd.active) recv_f.emplace_back(a.recv_fwd.microbatch, a.recv_fwd.chunk);
              if (a.send_bwd.active) sent_b.emplace_back(a.send_bwd.microbatch, a.send_bwd.chunk);
            }
            if (s == pp - 1 && vpp == 1) {
              EXPECT_TRUE(sent_f.empty());
              EXPECT_TRUE(recv_b.empty());
              continue;
            }
            EXPECT_EQ(sent_f, recv_f) << "pp " << pp << " vpp " << vpp << " m " << m << " stage " << s;
            EXPECT_EQ(sent_b, recv_b) << "pp " << pp << " vpp " << vpp << " m " << m << " stage " << s;
          }
          // Every (microbatch, chunk) runs exactly one forward and one backward on every stage.
          for (const auto& acts : st) {
            std::map<std::tuple<int, int, int>, int> seen;
            for (const auto& a : acts) {
              if (a.kind != PipeActionKind::p2p) ++seen[{static_cast<int>(a.kind), a.microbatch, a.chunk}];
            }
            EXPECT_EQ(seen.size(), static_cast<std::size_t>(2 * m * vpp));
            for (const auto& [k, n] : seen) EXPECT_EQ(n, 1);
          }
        }
      }
    }
  }
}

// Megatron-Core's schedules.py adds one warm-up forward under overlap_moe_expert_parallel_comm (the combined
// 1F1B) when vpp > 1, so that a steady step never merges a forward with its own backward: without it the
// last stage's steady steps pair F(mb, last chunk) with B(mb, last chunk), the backward of the forward they
// run beside (the loss's gradient has no receive to wait for, so the twin ran the two halves interleaved).
TEST(Schedule, CombinedOneF1BAddsAWarmupForwardSoNoStepPairsWithItself) {
  EXPECT_EQ(warmup_microbatches(4, 2, 8, 0, true), 11);
  EXPECT_EQ(warmup_microbatches(4, 2, 8, 3, true), 5);
  EXPECT_EQ(warmup_microbatches(4, 2, 4, 0, true), 8);  // capped at m * vpp
  EXPECT_EQ(warmup_microbatches(4, 1, 8, 0, true), 3);  // no virtual pipeline: no combined steady state
  // pp 2, vpp 2, m 4, stage 1 (last): warm-up 0 * 2 + 1 * 2 + 1 = 3 forwards; then F(k + 3) beside B(k).
  auto steps = [](const std::vector<PipeAction>& acts) {
    std::string out;
    for (const auto& x : acts) {
      if (x.kind == PipeActionKind::p2p) continue;
      out += concat({x.kind == PipeActionKind::forward ? "F" : "B", std::to_string(x.microbatch), ".",
                     std::to_string(x.chunk), " "});
    }
    return out;
  };
  EXPECT_EQ(steps(pipeline_schedule(2, 2, 4, 1)),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0 ");
  EXPECT_EQ(steps(pipeline_schedule(2, 2, 4, 1, P2pMode::blocking, true)),
            "F0.0 F1.0 F0.1 F1.1 B0.1 F2.0 B1.1 F3.0 B0.0 F2.1 B1.0 F3.1 B2.1 B3.1 B2.0 B3.0 ");
  // A steady step (a forward and the backward right after it, or after its posted call) never holds one
  // (microbatch, chunk) twice with the extra warm-up; without it the last stage's does.
  for (const P2pMode mode : {P2pMode::blocking, P2pMode::overlapped}) {
    for (int pp : {2, 4, 8}) {
      for (int vpp : {2, 3}) {
        for (int m : {pp, 2 * pp, 4 * pp}) {
          for (int s = 0; s < pp; ++s) {
            for (const bool combined : {false, true}) {
              const auto acts = pipeline_schedule(pp, vpp, m, s, mode, combined);
              int self = 0;
              for (std::size_t i = 0; i + 1 < acts.size(); ++i) {
                if (acts[i].kind != PipeActionKind::forward) continue;
                std::size_t j = i + 1;
                if (acts[j].kind == PipeActionKind::p2p && acts[j].posted && j + 1 < acts.size()) ++j;
                if (acts[j].kind == PipeActionKind::backward && acts[j].microbatch == acts[i].microbatch &&
                    acts[j].chunk == acts[i].chunk)
                  ++self;
              }
              if (combined || s < pp - 1) {
                EXPECT_EQ(self, 0) << "pp " << pp << " vpp " << vpp << " m " << m << " stage " << s;
              } else {
                EXPECT_GT(self, 0) << "pp " << pp << " vpp " << vpp << " m " << m << " stage " << s;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace moetwin
