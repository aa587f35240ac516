#include "moetwin/accounting/hbm_headroom.hpp"

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

double hbm_usable_bytes(double hbm_bytes, double headroom) {
  return (1.0 - headroom) * hbm_bytes;
}

bool within_hbm_headroom(const MemoryEstimate& memory, double headroom) {
  return memory.worst().total() <= hbm_usable_bytes(memory.hbm_bytes, headroom);
}

std::string memory_use_text(double used_bytes, double hbm_bytes) {
  return concat({format_fixed(used_bytes / kGiB, 1), " of ", format_fixed(hbm_bytes / kGiB, 1), " GiB (",
                 format_fixed(hbm_bytes > 0 ? used_bytes / hbm_bytes * 100 : 0, 0), "%)"});
}

std::string hbm_headroom_warning(const Scenario& scenario, const MemoryEstimate& memory, double headroom) {
  if (!memory.fits || within_hbm_headroom(memory, headroom)) return "";
  const double usable = hbm_usable_bytes(memory.hbm_bytes, headroom);
  return concat({"uses ", memory_use_text(memory.worst().total(), memory.hbm_bytes), " of ",
                 scenario.gpu.name, " HBM per GPU on stage ", std::to_string(memory.worst_stage),
                 ", above the ", format_fixed(usable / kGiB, 1), " GiB (",
                 format_fixed((1 - headroom) * 100, 0), "%) that --hbm-headroom ",
                 format_fixed(headroom * 100, 0),
                 "% leaves for what the memory model misses (allocator fragmentation beyond its reserve, "
                 "untracked buffers): it may run out of memory; a heavier recompute or more pipeline stages "
                 "leave room"});
}

}  // namespace moetwin
