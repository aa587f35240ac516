// Ring attention's per-rank work and step times (context_parallel.hpp).
#include "moetwin/sim/context_parallel.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moetwin {
namespace {

constexpr double kKvBytesPerElement = 2;  // bf16 K and V (TE's CP exchanges the attention inputs as held)

void check(double tile_s, double xfer_s, int cp) {
  if (cp < 1) throw std::invalid_argument("ring attention: cp " + std::to_string(cp) + " < 1");
  if (!(tile_s >= 0) || !(xfer_s >= 0)) throw std::invalid_argument("ring attention: negative time");
}

}  // namespace

double ring_attention_pairs(double seq, int cp) {
  if (cp < 1) throw std::invalid_argument("ring attention: cp " + std::to_string(cp) + " < 1");
  return seq * seq / (2.0 * cp);
}

double cp_kv_bytes(const ModelSpec& m, int micro_batch, int seq_length, int cp, int tp) {
  const double tokens = static_cast<double>(micro_batch) * seq_length / cp;
  double width = 0;  // K + V elements per token on this TP rank
  if (m.attention == AttentionKind::mla) {
    width = static_cast<double>(m.heads) * (m.qk_head_dim + m.qk_rope_dim + m.v_head_dim) / tp;
  } else {
    const double groups = std::max(1.0, static_cast<double>(m.query_groups) / tp);
    width = 2.0 * groups * m.head_dim;
  }
  return tokens * width * kKvBytesPerElement;
}

double ring_attention_forward_s(double tile_s, double xfer_s, int cp) {
  check(tile_s, xfer_s, cp);
  return (cp - 1) * std::max(tile_s, xfer_s) + tile_s;
}

double ring_attention_backward_s(double tile_s, double xfer_s, int cp) {
  check(tile_s, xfer_s, cp);
  if (cp == 1) return tile_s;
  return std::max(tile_s, xfer_s) + (cp - 2) * std::max(tile_s, 2 * xfer_s) + std::max(tile_s, xfer_s) +
         xfer_s;
}

}  // namespace moetwin
