// NVLink fit points from a calibration database (fitter.hpp, nvlink_points).
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

std::vector<NvlinkPoint> nvlink_points(const CalibrationDb& db, int max_ranks) {
  std::vector<NvlinkPoint> out;
  const auto add = [&](const std::string& op, const Experiment& e, const char* bytes_key) {
    const auto ranks = e.params.find("ranks");
    if (ranks == e.params.end()) return;
    const int n = static_cast<int>(ranks->second);
    if (n < 2 || n > max_ranks) return;
    out.push_back({op, n, e.param(bytes_key), e.stats().median});
  };
  for (const Experiment* e : db.of_kind("nccl")) add(e->labels.at("op"), *e, "bytes");
  // nccl-tests names two ops differently; broadcast, reduce, gather ... have no model here.
  static const std::map<std::string, std::string> nccl_tests_ops = {{"all_reduce", "all_reduce"},
                                                                    {"reduce_scatter", "reduce_scatter"},
                                                                    {"all_gather", "all_gather"},
                                                                    {"alltoall", "all_to_all"},
                                                                    {"sendrecv", "send_recv"}};
  for (const Experiment* e : db.of_kind("nccl_tests")) {
    if (e->labels.at("placement") != "out_of_place") continue;
    const auto op = nccl_tests_ops.find(e->labels.at("op"));
    if (op != nccl_tests_ops.end()) add(op->second, *e, "size_bytes");
  }
  // Report order: op, GPU count, size.
  std::sort(out.begin(), out.end(), [](const NvlinkPoint& a, const NvlinkPoint& b) {
    return std::tie(a.op, a.ranks, a.bytes) < std::tie(b.op, b.ranks, b.bytes);
  });
  return out;
}

std::vector<FabricPoint> efa_fabric_points(const CalibrationDb& db, std::string& buffer) {
  std::vector<FabricPoint> out;
  buffer.clear();
  for (const char* kind : {"fabric_latency", "fabric_bandwidth"}) {
    for (const Experiment* e : db.of_kind(kind)) {
      const auto provider = e->labels.find("provider");
      if (provider == e->labels.end() || provider->second != "efa") continue;
      const auto b = e->labels.find("buffer");
      const std::string where = b == e->labels.end() ? "host" : b->second;
      if (!buffer.empty() && where != buffer) {
        throw InputError({e->name, 0}, "label buffer", where,
                         "the same buffer kind (" + buffer + ") for every efa run of one profile");
      }
      buffer = where;
      out.push_back({std::string(kind) == "fabric_bandwidth", e->param("bytes"), e->stats().median});
    }
  }
  return out;
}

}  // namespace moetwin
