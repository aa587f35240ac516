#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "unknown";
}

const char* to_string(RoutingKind kind) {
  switch (kind) {
    case RoutingKind::balanced:
      return "balanced";
    case RoutingKind::zipf:
      return "zipf";
    case RoutingKind::group_limited:
      return "group-limited";
    case RoutingKind::histogram:
      return "histogram";
  }
  return "unknown";
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"bf16",          "fp8-hybrid", "fp8-current",
                                                 "fp8-blockwise", "mxfp8",      "nvfp4"};
  return names;
}

const char* to_string(Precision precision) {
  return precision_names()[static_cast<std::size_t>(precision)].c_str();
}

std::string precision_expected(const std::string& /*value*/) {
  std::string list;
  for (const std::string& n : precision_names()) list += (list.empty() ? "" : ", ") + n;
  return "one of " + list;
}

std::optional<Precision> precision_from_string(const std::string& text) {
  const std::vector<std::string>& names = precision_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

const std::vector<std::string>& cuda_graphs_names() {
  static const std::vector<std::string> names = {"none", "te-scoped", "full-iteration", "te-router"};
  return names;
}

const char* to_string(CudaGraphs graphs) {
  return cuda_graphs_names()[static_cast<std::size_t>(graphs)].c_str();
}

std::optional<CudaGraphs> cuda_graphs_from_string(const std::string& text) {
  const std::vector<std::string>& names = cuda_graphs_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<CudaGraphs>(i);
  }
  return std::nullopt;
}

bool overlap_p2p_comm(const Scenario& s) {
  return s.parallel.vpp > 1 && s.training.overlap_p2p_comm.value_or(s.stack.spec.overlap_p2p_comm);
}

StackChoice make_stack_choice(const StackSpec& spec, const NcclKnobs& knobs, const InstanceSpec& instance,
                              bool from_default) {
  StackChoice c;
  c.spec = spec;
  c.from_default = from_default;
  c.nccl = spec.nccl_env;
  if (knobs.max_nchannels > 0) c.nccl.max_nchannels = knobs.max_nchannels;
  if (!knobs.algo.empty()) c.nccl.algo = knobs.algo;
  if (!knobs.proto.empty()) c.nccl.proto = knobs.proto;
  if (knobs.p2p_net_chunk_bytes > 0) c.nccl.p2p_net_chunk_bytes = knobs.p2p_net_chunk_bytes;
  if (knobs.buffsize_bytes > 0) c.nccl.buffsize_bytes = knobs.buffsize_bytes;
  if (knobs.pxn_disable) c.nccl.pxn_disable = true;
  c.p2p_net_chunk_bytes = p2p_net_chunk_bytes(spec, c.nccl, instance);
  return c;
}

}  // namespace moetwin
