#include "moetwin/sim/tp_comm_overlap.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moetwin {

namespace {

void check_times(double comm_s, double gemm_s) {
  if (!(comm_s >= 0) || !(gemm_s >= 0))
    throw std::invalid_argument("tp_comm_overlap: communication and GEMM times must be >= 0");
}

}  // namespace

double pipelined_exposed_s(double comm_s, double gemm_s, int chunks) {
  check_times(comm_s, gemm_s);
  if (chunks < 1) throw std::invalid_argument("tp_comm_overlap: chunks must be >= 1");
  const double n = chunks;
  return std::max(comm_s / n, comm_s - gemm_s + gemm_s / n);
}

double bulk_exposed_s(double comm_s, double gemm_s) {
  check_times(comm_s, gemm_s);
  return std::max(0.0, comm_s - gemm_s);
}

double exposed_s(TpOverlapMethod method, double comm_s, double gemm_s, int chunks) {
  return method == TpOverlapMethod::bulk ? bulk_exposed_s(comm_s, gemm_s)
                                         : pipelined_exposed_s(comm_s, gemm_s, chunks);
}

double overlapped_gemm_s(TpOverlapMethod method, double gemm_s, int gpu_sms, int overlap_sms) {
  if (!(overlap_sms >= 1 && overlap_sms < gpu_sms))
    throw std::invalid_argument("tp_comm_overlap: overlap SMs " + std::to_string(overlap_sms) +
                                " must be in [1, " + std::to_string(gpu_sms) + ")");
  if (method == TpOverlapMethod::ring_exchange) return gemm_s;
  return gemm_s * static_cast<double>(gpu_sms) / static_cast<double>(gpu_sms - overlap_sms);
}

}  // namespace moetwin
