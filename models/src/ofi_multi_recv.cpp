// aws-ofi-nccl multi-receive, bounded. See ofi_multi_recv.hpp.
#include "moetwin/models/ofi_multi_recv.hpp"

#include <algorithm>

#include "moetwin/common/numbers.hpp"

namespace moetwin {

namespace {
constexpr int kMaxMultiRecvBuffers = 8;  // aws-ofi-nccl doc/multi-recv.md: up to 8 buffers per irecv
}  // namespace

MultiRecvBound multi_recv_bound(const StackSpec& stack, const InstanceSpec& instance, bool nccl_pxn) {
  MultiRecvBound b;
  if (!stack.ofi_multi_recv) return b;
  // Only PXN funnels several local GPUs' sub-messages through one proxy to one receiver; without it each
  // sender has its own connection and nothing is grouped.
  b.grouped_receives = nccl_pxn ? std::max(1, std::min(kMaxMultiRecvBuffers, instance.gpus)) : 1;
  b.chunk_cost_lo = 1.0 / b.grouped_receives;
  if (b.grouped_receives == 1) {
    b.why = "aws-ofi-nccl multi-receive on (no effect without PXN: each sender has its own receive)";
    return b;
  }
  b.why = "aws-ofi-nccl multi-receive on (bounded, not fitted: up to " + std::to_string(b.grouped_receives) +
          " PXN receives share one control message, so NCCL's per-chunk cost is " +
          format_fixed(b.chunk_cost_lo, 3) + "-1 x net_chunk_s; predicted at 1 x, the upper end)";
  return b;
}

}  // namespace moetwin
