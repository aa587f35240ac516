#include "moetwin/catalog/dispatcher_gate.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

std::optional<std::string> flex_backend_refusal(const DispatcherSpec& d, const GpuSpec& gpu) {
  const int major = static_cast<int>(std::floor(gpu.compute_capability));
  const std::string cc = format_fixed(gpu.compute_capability, 1);
  switch (d.flex_backend) {
    case FlexBackend::none:
      return std::nullopt;
    case FlexBackend::deepep:
      // Compute capability 8.x / 9.x, or a discrete Blackwell board GPU (B200, B300): not a Grace superchip.
      if (major == 8 || major == 9 || (major == 10 && !gpu.grace_superchip)) return std::nullopt;
      return concat(
          {"Megatron-Bridge runs the flex backend \"deepep\" only on compute capability 8.x/9.x and on "
           "the discrete B200/B300; on ",
           gpu.name, " (", cc, gpu.grace_superchip ? ", a Grace superchip GPU" : "",
           ") it falls back to the alltoall dispatcher (flex_dispatcher_backend.py): choose "
           "nccl-alltoall",
           major == 10 ? " (NVIDIA's recipes run hybridep there, on InfiniBand)" : ""});
    case FlexBackend::hybridep:
      if (major >= 8 && major <= 10) return std::nullopt;
      return concat(
          {"Megatron-Bridge runs the flex backend \"hybridep\" only on compute capability 8.x-10.x; on ",
           gpu.name, " (", cc,
           ") it falls back to the alltoall dispatcher (flex_dispatcher_backend.py): choose "
           "nccl-alltoall"});
  }
  return std::nullopt;
}

int nvlink_reach_gpus(const DispatcherSpec& d, const InstanceSpec& instance) {
  return d.reaches_nvlink_domain ? nvlink_domain_gpus(instance) : instance.gpus;
}

std::optional<std::string> transport_refusal(const DispatcherSpec& d, const InstanceSpec& instance,
                                             int ep_group_gpus, int world_gpus) {
  const int reach = nvlink_reach_gpus(d, instance);
  const bool inside_reach = ep_group_gpus > 0 && ep_group_gpus <= reach &&
                            (reach % ep_group_gpus == 0 || (world_gpus > 0 && world_gpus <= reach));
  if (inside_reach) return std::nullopt;
  if (!d.runs_on(instance.fabric)) {
    std::string fabrics;
    for (const Fabric f : d.fabrics) fabrics += concat({fabrics.empty() ? "" : ", ", to_string(f)});
    return concat({d.name, " runs on ", fabrics, " only; ", instance.name, " is on ",
                   to_string(instance.fabric), " (", d.description, ")"});
  }
  const bool has_fallback = d.fallback_transport != d.transport;
  if (d.needs_gpu_initiated_rdma && !has_fallback && !instance.gpu_initiated_rdma) {
    return concat({d.name, " needs GPU-initiated RDMA, which ", instance.name, " lacks"});
  }
  return std::nullopt;
}

std::optional<std::string> dispatcher_refusal(const DispatcherSpec& d, const InstanceSpec& instance,
                                              const GpuSpec& gpu, int ep_group_gpus, int world_gpus) {
  if (auto why = transport_refusal(d, instance, ep_group_gpus, world_gpus)) return why;
  return flex_backend_refusal(d, gpu);
}

std::optional<std::string> rank_cap_refusal(const DispatcherSpec& d, int ep_ranks) {
  if (d.max_ranks_normal <= 0 || ep_ranks <= d.max_ranks_normal) return std::nullopt;
  return concat({"a dispatcher whose normal kernels reach ep = ", std::to_string(ep_ranks), " ranks (",
                 d.name, " normal mode caps at ", std::to_string(d.max_ranks_normal), " EP ranks)"});
}

namespace {

// A term's value on `instance`: its instance-scoped value there, else its unscoped one; nullopt if absent.
std::optional<double> term_on(const DispatcherSpec& d, const std::string& name, const std::string& instance) {
  std::optional<double> value;
  for (const ModelParam& t : d.terms) {
    if (t.name != name) continue;
    if (t.instance == instance) return t.value;
    if (t.instance.empty()) value = t.value;
  }
  return value;
}

}  // namespace

std::optional<std::string> same_mechanism_note(const DispatcherSpec& a, const DispatcherSpec& b,
                                               const InstanceSpec& instance) {
  if (a.name == b.name || a.node_dedup != b.node_dedup) return std::nullopt;
  // The path that posts the RDMA writes on this instance (a fallback where GPU-initiated RDMA is missing).
  auto path = [&](const DispatcherSpec& d) {
    return d.needs_gpu_initiated_rdma && !instance.gpu_initiated_rdma ? d.fallback_transport : d.transport;
  };
  if (path(a) != path(b)) return std::nullopt;
  const int reach_a = nvlink_reach_gpus(a, instance);
  if (reach_a != nvlink_reach_gpus(b, instance)) return std::nullopt;
  // What still tells them apart: the SMs their kernels hold and the terms both models read with different
  // values here. More than two such terms: their own calibrations tell them apart, no note.
  std::vector<std::string> differ;
  if (a.sms != b.sms)
    differ.push_back(concat({"SMs held (", std::to_string(a.sms), " vs ", std::to_string(b.sms),
                             ": they slow overlapped compute only)"}));
  std::vector<std::string> seen;
  for (const ModelParam& t : a.terms) {
    if (std::find(seen.begin(), seen.end(), t.name) != seen.end()) continue;
    seen.push_back(t.name);
    const std::optional<double> va = term_on(a, t.name, instance.name);
    const std::optional<double> vb = term_on(b, t.name, instance.name);
    if (va && vb && *va != *vb)
      differ.push_back(concat({t.name, " (", format_exact(*va), " vs ", format_exact(*vb), ")"}));
  }
  if (differ.size() > 2) return std::nullopt;
  std::string rest;
  for (const std::string& d : differ) rest += concat({rest.empty() ? "" : ", ", d});
  const std::string reach = std::to_string(reach_a);
  return concat(
      {a.name, " and ", b.name, " run one mechanism on ", instance.name, ": ",
       a.node_dedup ? "one token copy per destination NVLink group of "
                    : "one copy per (token, expert) over NVLink groups of ",
       reach, " GPUs, the rest over ", to_string(path(a)), " RDMA on ", to_string(instance.fabric),
       a.reaches_nvlink_domain != b.reaches_nvlink_domain
           ? concat({" (the NVLink domain is the ", reach,
                     "-GPU node here, so a stage reaching the domain reaches no "
                     "further than one stopping at the node)"})
           : std::string(),
       "; ", rest.empty() ? std::string("no term tells them apart") : concat({"they differ only in ", rest}),
       ": predictions alike are the mechanism's, not a missing term"});
}

}  // namespace moetwin
