// aws-ofi-nccl multi-receive (1.20+, on by default; the NeMo 26.08 stack's 1.21.1): what it changes per
// all-to-all message, bounded rather than fitted (no live run has it).
//
// Mechanism (aws-ofi-nccl doc/multi-recv.md; shared/design/efa-mechanisms.md section 5): NCCL's all-to-all
// with PXN sends, from one proxy GPU, the sub-messages of every local GPU whose destination has that GPU's
// index. Without multi-receive the receiver posts one irecv per sub-message and RDMA-writes one rendezvous
// control message for each; with it one irecv carries up to 8 buffers and one control message holds the
// entries (64 B each) for all of them. The data writes, their completions and the copies into NCCL's FIFO are
// unchanged. So per network chunk only the control-message part of NCCL's per-chunk proxy work
// (nccl-alltoall.net_chunk_s) shrinks, to 1 / (receives grouped) of itself.
//
// The bound: that control part is not separable from the rest of net_chunk_s in any row, so the per-chunk
// cost lies between 1 / grouped (were all of it control messages) and 1 (were none) x net_chunk_s. The twin
// predicts at the upper end (the fitted cost unchanged) and says so. Where the run's P2P chunk equals the
// nccl-tests calibration chunk (512 KiB, aws-ofi-nccl platform-aws on p5en/p6) the twin charges no chunk
// term at all, so there the bound is the gap inside the benchmark calibration itself (its plugin version is
// not recorded) and nothing in the prediction moves.
#pragma once

#include <string>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

struct MultiRecvBound {
  int grouped_receives = 1;  // receives one control message serves: min(8, GPUs per node) with PXN, else 1
  double chunk_cost_lo = 1;  // lowest per-chunk cost, x net_chunk_s (1 / grouped_receives)
  double chunk_cost_hi = 1;  // highest (and the one predicted), x net_chunk_s
  std::string why;           // one line for the prediction report
};

// For a stack on an instance; `nccl_pxn` NCCL's PXN (default on). Without multi-receive: 1 / 1 and "".
MultiRecvBound multi_recv_bound(const StackSpec& stack, const InstanceSpec& instance, bool nccl_pxn = true);

}  // namespace moetwin
