#include "moetwin/catalog/catalog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"

#ifndef MOETWIN_DEFAULT_CATALOG_DIR
#define MOETWIN_DEFAULT_CATALOG_DIR "catalog/data"
#endif

namespace moetwin {
namespace {

constexpr int kBig = 1 << 30;

// Calls `fn(name, StrictTable&)` for every top-level table of a catalog file, in name order.
template <typename Fn>
void for_each_entry(const std::string& path, Fn fn) {
  const toml::table root = parse_toml(read_text_file(path, input_kind::toml), path);
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    const auto* t = v.as_table();
    if (!t) {
      throw InputError({path, static_cast<int>(v.source().begin.line)}, key, describe_toml_value(v),
                       "a table [" + key + "] describing one catalog entry");
    }
    // Names become file names (plan's scenario files carry the dispatcher's) and report text: a safe
    // character set only, so that "../../x" cannot name a file outside the folder (issue 55).
    const bool safe =
        !key.empty() && key != "." && key != ".." &&
        key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
            std::string::npos;
    if (!safe) {
      throw InputError(
          {path, static_cast<int>(t->source().begin.line)}, "entry name", "\"" + key + "\"",
          "letters, digits, '.', '_' and '-' only (a name is used in file names), not \".\" or \"..\"");
    }
    StrictTable table(*t, path, "[" + key + "].");
    fn(key, table);
    table.finish();
  }
}

// The entry's `unverified.<key> = { min, max, why }` assumptions: each must name one of `values` (the
// entry's numeric keys as read, file units) and hold its value inside [min, max].
std::vector<Assumption> read_unverified(StrictTable& t, const std::map<std::string, double>& values) {
  std::vector<Assumption> out;
  auto table = t.table("unverified");
  if (!table) return out;
  for (const auto& [key, value] : values) {
    if (!table->has(key)) continue;
    auto a = table->table(key);
    if (!a) {
      throw InputError(table->where(key), table->name(key), "a value",
                       "a table { min = .., max = .., why = \"..\" } bounding the assumed value");
    }
    Assumption u;
    u.key = key;
    u.value = value;
    u.min = a->number("min", -1e30, 1e30);
    u.max = a->number("max", u.min, 1e30);
    u.why = a->string("why");
    if (u.why.empty()) throw InputError(a->where("why"), a->name("why"), "\"\"", "why the value is believed");
    if (value < u.min || value > u.max) {
      throw InputError(a->where("min"), a->name("min"), format_exact(u.min) + ".." + format_exact(u.max),
                       "bounds that hold the assumed value " + key + " = " + format_exact(value));
    }
    a->finish();
    out.push_back(std::move(u));
  }
  table->finish();  // a key that is no numeric key of the entry: "no such key" with the closest one
  return out;
}

GpuSpec read_gpu(const std::string& name, StrictTable& t) {
  GpuSpec g;
  g.name = name;
  g.bf16_flops = t.number("bf16_tflops", 1, 1e5) * 1e12;
  g.fp8_flops = t.number("fp8_tflops", 1, 1e5) * 1e12;
  // FP4 tensor cores (Blackwell): optional; a GPU that has them needs the measured relative efficiency
  // (0.1 .. 1: an FP4 GEMM below a tenth of the BF16 fraction, or above it, is a typo).
  g.fp4_flops = t.number_or("fp4_tflops", 1, 1e5, 0) * 1e12;
  if (g.fp4_flops > 0) g.fp4_relative_efficiency = t.number("fp4_relative_efficiency", 0.1, 1.0);
  // FP8 at its peak relative to BF16 at its (optional, 1 = the BF16 fraction): below half or above 1.2 no FP8
  // GEMM measured anywhere (H100/H200 curves: FP8 0.68-0.73 of 1979 against bf16 0.78-0.82 of 989).
  g.fp8_relative_efficiency = t.number_or("fp8_relative_efficiency", 0.5, 1.2, 1.0);
  g.mxfp8_relative_efficiency = t.number_or("mxfp8_relative_efficiency", 0.5, 1.2, 1.0);
  g.hbm_bytes = t.number("hbm_gb", 1, 1e5) * kGB;
  g.hbm_bandwidth = t.number("hbm_tbps", 0.1, 1e3) * kTB;
  g.nvlink_gen = t.int32("nvlink_gen", 1, 10);
  // Marketed NVLink figures are bidirectional totals: per direction is half.
  g.nvlink_bandwidth = t.number("nvlink_gbps_bidir", 1, 1e5) * kGB / 2.0;
  g.sms = t.int32("sms", 1, 10000);
  g.mxfp8 = t.boolean("mxfp8");
  // 7.0 (Volta) .. 12.x (Blackwell consumer): anything else is a typo.
  g.compute_capability = t.number("compute_capability", 7.0, 13.0);
  g.grace_superchip = t.boolean("grace_superchip");
  g.calibration_from = t.string_or("calibration_from", "");
  g.source = t.string("source");
  auto eff = t.table("efficiency");
  if (!eff)
    throw InputError(t.where("efficiency"), t.name("efficiency"), "missing",
                     "a table of op-class efficiencies");
  for (const char* cls : {"gemm", "grouped_gemm", "attention", "elementwise"}) {
    g.efficiency[cls] = eff->number(cls, 0.01, 1.0);
  }
  eff->finish();
  g.unverified = read_unverified(t, {{"bf16_tflops", g.bf16_flops / 1e12},
                                     {"fp8_tflops", g.fp8_flops / 1e12},
                                     {"fp4_tflops", g.fp4_flops / 1e12},
                                     {"hbm_gb", g.hbm_bytes / kGB},
                                     {"hbm_tbps", g.hbm_bandwidth / kTB},
                                     {"nvlink_gbps_bidir", g.nvlink_bandwidth * 2.0 / kGB},
                                     {"sms", g.sms}});
  return g;
}

// A GPU may borrow the calibration profile of another only if they are the same die: a profile's GEMM
// curves are fractions of the tensor-core peak and its NVLink bands are per NVLink generation, so those
// must match; only HBM (capacity and bandwidth) may differ, and the borrower scales its memory-bound
// rates by it. One step only: the lender must have no lender of its own.
void check_calibration_from(const std::map<std::string, GpuSpec>& gpus, const std::string& name,
                            const InputLocation& where) {
  const GpuSpec& g = gpus.at(name);
  const std::string key = "[" + name + "].calibration_from";
  const std::string value = "\"" + g.calibration_from + "\"";
  const auto it = gpus.find(g.calibration_from);
  if (it == gpus.end() || it->first == name || !it->second.calibration_from.empty()) {
    throw InputError(where, key, value, "another GPU of gpus.toml that has no calibration_from of its own");
  }
  const GpuSpec& from = it->second;
  const auto differs = [](double a, double b) { return std::abs(a - b) > 1e-9 * std::max(a, b); };
  std::string what;
  if (differs(g.bf16_flops, from.bf16_flops))
    what = "bf16_tflops";
  else if (differs(g.fp8_flops, from.fp8_flops))
    what = "fp8_tflops";
  else if (differs(g.fp4_flops, from.fp4_flops))
    what = "fp4_tflops";
  else if (g.sms != from.sms)
    what = "sms";
  else if (g.nvlink_gen != from.nvlink_gen)
    what = "nvlink_gen";
  else if (differs(g.nvlink_bandwidth, from.nvlink_bandwidth))
    what = "nvlink_gbps_bidir";
  if (!what.empty()) {
    throw InputError(
        where, key, value,
        "a GPU of the same die (" + name + "'s " + what + " differs from " + from.name + "'s; only HBM may)");
  }
}

// The largest NVLink domain NVIDIA has announced is NVL576 (Rubin Ultra); 1152 leaves room without letting a
// typo pass.
constexpr int kMaxNvlinkDomainGpus = 1152;

InstanceSpec read_instance(const std::string& name, StrictTable& t) {
  InstanceSpec i;
  i.name = name;
  i.gpu = t.string("gpu");
  i.gpus = t.int32("gpus", 1, 64);
  i.fabric =
      t.choice_or("fabric", {"efa", "infiniband"}, "efa") == "infiniband" ? Fabric::infiniband : Fabric::efa;
  std::string nics_key = "efa_nics";
  double nic_gbps = 0;
  if (i.fabric == Fabric::efa) {
    i.efa_gen = t.int32("efa_gen", 1, 10);
    i.efa_nics = t.int32("efa_nics", 1, 256);
    nic_gbps = t.number("nic_gbps", 1, 1e5);
  } else {
    // InfiniBand: the generation fixes the port rate (NDR 400 Gb/s, XDR 800 Gb/s per port, 4x links).
    nics_key = "ib_nics";
    i.ib_generation = t.choice("ib_generation", {"NDR", "XDR"});
    i.efa_nics = t.int32("ib_nics", 1, 256);
    nic_gbps = t.number("nic_gbps", 1, 1e5);
    const double rate = i.ib_generation == "NDR" ? 400 : 800;
    if (nic_gbps != rate) {
      throw InputError(t.where("nic_gbps"), t.name("nic_gbps"), format_exact(nic_gbps),
                       format_exact(rate) + " (an " + i.ib_generation + " InfiniBand port)");
    }
  }
  i.nic_bandwidth = nic_gbps * 1e9 / 8.0;
  i.nics_per_gpu = t.int32("nics_per_gpu", 1, 64);
  // Bounds: above 0.1 (the lowest measured cross-rail ratio is 0.37, p5 at 256 KiB), at most rail-aligned.
  i.cross_rail_efficiency = t.number_or("cross_rail_efficiency", 0.1, 1, 1);
  i.nvlink_domain_gpus = t.int32_or("nvlink_domain_gpus", 1, kMaxNvlinkDomainGpus, i.gpus);
  if (i.nvlink_domain_gpus < i.gpus || i.nvlink_domain_gpus % i.gpus != 0) {
    throw InputError(
        t.where("nvlink_domain_gpus"), t.name("nvlink_domain_gpus"), std::to_string(i.nvlink_domain_gpus),
        "a multiple of gpus (" + std::to_string(i.gpus) +
            "): a domain holds whole nodes (an 8-GPU node's is 8, an NVL72 rack of 4-GPU trays 72)");
  }
  i.host_memory_bytes = t.number("host_mem_tib", 0.01, 1e3) * kGiB * 1024.0;
  i.gpu_initiated_rdma = t.boolean("gpu_initiated_rdma");
  i.base_latency_s = t.number("base_latency_us", 0, 1e6) * 1e-6;
  i.price_usd_per_hour = t.number("price_usd_per_hour", 0, 1e6);
  i.price_source = t.string("price_source");
  if (i.fabric == Fabric::efa)
    i.ofi_platform_p2p_chunk_bytes = t.number_or("ofi_platform_p2p_chunk_kib", 0, 1 << 20, 0) * 1024.0;
  i.cpu = t.string("cpu");
  i.cpu_cores = t.int32("cpu_cores", 1, 100000);
  i.cpu_single_thread_score = t.number("cpu_geekbench6_single", 1, 1e6);
  i.cpu_source = t.string("cpu_source");
  // Host link (CPU offload): both keys or neither. Bounds: above a PCIe Gen3 x16 port (16 GB/s), at most
  // NVLink-C2C's 900 GB/s in both directions together.
  if (t.has("host_link") || t.has("host_link_gbs")) {
    i.host_link = t.choice("host_link", {"pcie-gen5-x16", "nvlink-c2c"});
    i.host_link_bandwidth = t.number("host_link_gbs", 16, 900) * 1e9;
    i.host_link_source = t.string("host_link_source");
  }
  i.source = t.string("source");
  if (i.efa_nics != i.gpus * i.nics_per_gpu) {
    throw InputError(t.where("nics_per_gpu"), t.name("nics_per_gpu"), std::to_string(i.nics_per_gpu),
                     nics_key + " / gpus = " + std::to_string(i.efa_nics) + " / " + std::to_string(i.gpus));
  }
  i.unverified = read_unverified(t, {{"gpus", i.gpus},
                                     {"nic_gbps", nic_gbps},
                                     {nics_key, i.efa_nics},
                                     {"nvlink_domain_gpus", i.nvlink_domain_gpus},
                                     {"cross_rail_efficiency", i.cross_rail_efficiency},
                                     {"host_mem_tib", i.host_memory_bytes / (kGiB * 1024.0)},
                                     {"base_latency_us", i.base_latency_s * 1e6},
                                     {"cpu_cores", i.cpu_cores},
                                     {"cpu_geekbench6_single", i.cpu_single_thread_score},
                                     {"host_link_gbs", i.host_link_bandwidth / 1e9}});
  return i;
}

// Sliding-window attention and attention sinks (gpt-oss). A window is a GQA/MHA mechanism here (no MLA
// model uses one); a full-attention period without a window, or of 1 (no layer windowed), is refused.
void read_window(ModelSpec& m, StrictTable& t) {
  const bool mla = m.attention == AttentionKind::mla;
  m.sliding_window = t.int32_or("sliding_window", 0, kBig, 0);
  if (mla && m.sliding_window > 0) {
    throw InputError(t.where("sliding_window"), t.name("sliding_window"), std::to_string(m.sliding_window),
                     "0 for attention = \"mla\" (sliding windows are modelled for gqa/mha only)");
  }
  m.full_attention_every = t.int32_or("full_attention_every", 0, m.layers, 0);
  if (m.full_attention_every != 0 && (m.sliding_window == 0 || m.full_attention_every < 2)) {
    throw InputError(t.where("full_attention_every"), t.name("full_attention_every"),
                     std::to_string(m.full_attention_every),
                     m.sliding_window == 0 ? "no key without sliding_window > 0"
                                           : "0 (every layer windowed) or 2..layers (1 would window none)");
  }
  m.attention_sinks = t.boolean_or("attention_sinks", false);
  if (mla && m.attention_sinks) {
    throw InputError(t.where("attention_sinks"), t.name("attention_sinks"), "true",
                     "false for attention = \"mla\" (sinks are modelled for gqa/mha only)");
  }
}

ModelSpec read_model(const std::string& name, StrictTable& t) {
  ModelSpec m;
  m.name = name;
  m.layers = t.int32("layers", 1, 10000);
  m.dense_layers = t.int32("dense_layers", 0, m.layers);
  m.hidden = t.int32("hidden", 1, kBig);
  m.ffn_hidden = t.int32("ffn_hidden", 1, kBig);
  const std::string attention = t.choice("attention", {"mla", "gqa", "mha"});
  m.attention = attention == "mla"   ? AttentionKind::mla
                : attention == "mha" ? AttentionKind::mha
                                     : AttentionKind::gqa;
  m.heads = t.int32("heads", 1, 100000);
  if (m.attention == AttentionKind::mla) {
    m.q_lora_rank = t.int32_or("q_lora_rank", 0, kBig, 0);
    m.kv_lora_rank = t.int32("kv_lora_rank", 1, kBig);
    m.qk_head_dim = t.int32("qk_head_dim", 1, kBig);
    m.qk_rope_dim = t.int32("qk_rope_dim", 0, kBig);
    m.v_head_dim = t.int32("v_head_dim", 1, kBig);
  } else if (m.attention == AttentionKind::mha) {
    // One KV head per query head; a query_groups key, if given, must say so.
    m.query_groups = t.int32_or("query_groups", m.heads, m.heads, m.heads);
    m.head_dim = t.int32("head_dim", 1, kBig);
  } else {
    m.query_groups = t.int32("query_groups", 1, m.heads);
    m.head_dim = t.int32("head_dim", 1, kBig);
    if (m.heads % m.query_groups != 0) {
      throw InputError(t.where("query_groups"), t.name("query_groups"), std::to_string(m.query_groups),
                       "a divisor of heads (" + std::to_string(m.heads) + ")");
    }
  }
  read_window(m, t);
  m.experts = t.int32("experts", 0, 1 << 20);
  if (m.experts > 0) {
    m.expert_ffn_hidden = t.int32("expert_ffn_hidden", 1, kBig);
    m.top_k = t.int32("top_k", 1, m.experts);
    m.router_score = t.choice_or("router_score", {"softmax", "sigmoid"}, "softmax") == "sigmoid"
                         ? RouterScore::sigmoid
                         : RouterScore::softmax;
    m.router_groups = t.int32_or("router_groups", 0, m.experts, 0);
    m.router_topk_groups = t.int32_or("router_topk_groups", 0, m.router_groups, 0);
    if (m.router_groups > 0 && m.experts % m.router_groups != 0) {
      throw InputError(t.where("router_groups"), t.name("router_groups"), std::to_string(m.router_groups),
                       "a divisor of experts (" + std::to_string(m.experts) + ")");
    }
  }
  m.shared_ffn_hidden = t.int32_or("shared_ffn_hidden", 0, kBig, 0);
  m.vocab = t.int32("vocab", 1, kBig);
  m.vocab_pad_multiple = t.int32_or("vocab_pad_multiple", 1, 1 << 20, 128);
  m.mtp_layers = t.int32_or("mtp_layers", 0, 64, 0);
  m.tied_embeddings = t.boolean_or("tied_embeddings", false);
  m.source = t.string("source");
  return m;
}

DispatcherTransport parse_transport(StrictTable& t, const std::string& key) {
  const std::string s = t.choice(key, {"nccl", "cpu-proxy", "host-proxy", "gpu-initiated"});
  if (s == "cpu-proxy") return DispatcherTransport::cpu_proxy;
  if (s == "host-proxy") return DispatcherTransport::host_proxy;
  if (s == "gpu-initiated") return DispatcherTransport::gpu_initiated;
  return DispatcherTransport::nccl;
}

DispatcherSpec read_dispatcher(const std::string& name, StrictTable& t,
                               const std::map<std::string, InstanceSpec>& instances) {
  DispatcherSpec d;
  d.name = name;
  d.description = t.string("description");
  d.megatron_flag = t.string("megatron_flag");
  d.transport = parse_transport(t, "transport");
  d.fallback_transport = t.has("fallback_transport") ? parse_transport(t, "fallback_transport") : d.transport;
  d.needs_gpu_initiated_rdma = t.boolean_or("needs_gpu_initiated_rdma", false);
  d.node_dedup = t.boolean("node_dedup");
  d.fused_permute = t.boolean("fused_permute");
  d.sms = t.int32("sms", 0, 1000);
  d.proxy_threads_per_gpu = t.int32("proxy_threads_per_gpu", 0, 256);
  d.max_ranks_normal = t.int32("max_ranks_normal", 0, 1 << 20);
  d.max_ranks_low_latency = t.int32("max_ranks_low_latency", 0, 1 << 20);
  if (t.has("fabrics")) {
    const std::vector<std::string> fabrics = t.strings("fabrics");
    for (const std::string& f : fabrics) {
      if (f != "efa" && f != "infiniband")
        throw InputError(t.where("fabrics"), t.name("fabrics"), concat({"\"", f, "\""}),
                         "a list of \"efa\" and \"infiniband\"");
      d.fabrics.push_back(f == "efa" ? Fabric::efa : Fabric::infiniband);
    }
    if (d.fabrics.empty())
      throw InputError(t.where("fabrics"), t.name("fabrics"), "[]",
                       "at least one fabric (leave the key out for any fabric)");
  }
  const std::string backend = t.choice_or("flex_backend", {"none", "deepep", "hybridep"}, "none");
  d.flex_backend = backend == "deepep"     ? FlexBackend::deepep
                   : backend == "hybridep" ? FlexBackend::hybridep
                                           : FlexBackend::none;
  // Default: NCCL's per-copy all-to-all spans the domain (MNNVL); DeepEP's node-dedup kernels the host node.
  d.reaches_nvlink_domain = t.boolean_or("reaches_nvlink_domain", !d.node_dedup);
  d.deepep_version = d.node_dedup ? t.int32_or("deepep_version", 1, 2, 1) : 0;
  d.source = t.string("source");
  for (StrictTable& term : t.tables("terms")) {
    ModelParam m;
    m.name = term.string("name");
    m.unit = term.choice("unit", {"s", "fraction", "tokens", "count", "bytes", "B/s"});
    m.min = term.number("min", -1e30, 1e30);
    m.max = term.number("max", m.min, 1e30);
    m.value = term.number("value", m.min, m.max);
    m.fitted = term.boolean("fitted");
    m.source = term.string("source");
    m.instance = term.string_or("instance", "");
    if (m.source.empty())
      throw InputError(term.where("source"), term.name("source"), "\"\"", "where the value comes from");
    bool unscoped_seen = false;
    for (const ModelParam& other : d.terms) {
      if (other.name == m.name && other.instance == m.instance) {
        throw InputError(term.where("name"), term.name("name"), concat({"\"", m.name, "\""}),
                         m.instance.empty() ? concat({"a term name not used before in [[", name, ".terms]]"})
                                            : concat({"one term per name and instance (\"", m.instance,
                                                      "\" has one already)"}));
      }
      if (other.name == m.name && other.instance.empty()) unscoped_seen = true;
    }
    if (!m.instance.empty() && instances.count(m.instance) == 0) {
      std::string known;
      for (const auto& [k, _] : instances) known += (known.empty() ? "" : ", ") + k;
      throw InputError(term.where("instance"), term.name("instance"), concat({"\"", m.instance, "\""}),
                       "an instance defined in instances.toml: one of " + known);
    }
    if (!m.instance.empty() && !unscoped_seen) {
      throw InputError(term.where("instance"), term.name("instance"), concat({"\"", m.instance, "\""}),
                       concat({"an instance-scoped term after the unscoped term ", m.name,
                               " it overrides (the value every other instance takes)"}));
    }
    term.finish();
    d.terms.push_back(std::move(m));
  }
  return d;
}

StackSpec read_stack(const std::string& name, StrictTable& t, bool& is_default) {
  StackSpec s;
  s.name = name;
  s.description = t.string("description");
  s.megatron_core = t.string("megatron_core");
  s.megatron_bridge = t.string_or("megatron_bridge", "");
  s.megatron_lm = t.string_or("megatron_lm", "");
  s.nccl = t.string("nccl");
  s.aws_ofi_nccl = t.string("aws_ofi_nccl");
  s.transformer_engine = t.string_or("transformer_engine", "");
  s.torch = t.string_or("torch", "");
  s.deepep = t.string_or("deepep", "");
  s.uccl = t.string_or("uccl", "");
  s.nvshmem = t.string_or("nvshmem", "");
  s.ofi_platform_aws = t.boolean("ofi_platform_aws");
  s.ofi_multi_recv = t.boolean_or("ofi_multi_recv", false);
  if (auto env = t.table("nccl_env")) {
    s.nccl_env = read_nccl_knobs(*env);
    env->finish();
  }
  s.alltoall_pad_to_capacity = t.boolean_or("alltoall_pad_to_capacity", false);
  s.overlap_p2p_comm = t.boolean_or("overlap_p2p_comm", false);
  if (t.has("campaigns")) s.campaigns = t.strings("campaigns");
  is_default = t.boolean_or("default", false);
  s.source = t.string("source");
  return s;
}

template <typename Map>
const typename Map::mapped_type& lookup(const Map& map, const std::string& name, const std::string& what,
                                        const std::string& dir) {
  auto it = map.find(name);
  if (it != map.end()) return it->second;
  std::string known;
  for (const auto& [k, _] : map) known += (known.empty() ? "" : ", ") + k;
  throw InputError({dir, 0}, what, "\"" + name + "\"", "a catalog " + what + ": one of " + known);
}

}  // namespace

NcclKnobs read_nccl_knobs(StrictTable& t) {
  NcclKnobs k;
  k.max_nchannels = t.int32_or("nccl_max_nchannels", 1, 64, 0);
  k.algo = t.has("nccl_algo") ? t.choice("nccl_algo", {"Ring", "Tree", "CollnetDirect", "CollnetChain",
                                                       "NVLS", "NVLSTree", "PAT"})
                              : "";
  k.proto = t.has("nccl_proto") ? t.choice("nccl_proto", {"Simple", "LL", "LL128"}) : "";
  k.p2p_net_chunk_bytes = t.number_or("nccl_p2p_net_chunksize_kib", 4, 16384, 0) * 1024.0;
  k.buffsize_bytes = t.number_or("nccl_buffsize_mib", 0.0625, 1024, 0) * 1024.0 * 1024.0;
  k.pxn_disable = t.boolean_or("nccl_pxn_disable", false);
  return k;
}

std::string Catalog::default_dir() {
  if (const char* env = std::getenv("MOETWIN_CATALOG"); env && *env) return env;
  return MOETWIN_DEFAULT_CATALOG_DIR;
}

const Catalog& Catalog::shared_default() {
  static const Catalog catalog = load(default_dir());
  return catalog;
}

Catalog Catalog::load(const std::string& dir) {
  namespace fs = std::filesystem;
  Catalog c;
  c.dir_ = dir;
  std::map<std::string, InputLocation> calibration_from_at;
  for_each_entry((fs::path(dir) / "gpus.toml").string(), [&](const std::string& n, StrictTable& t) {
    c.gpus_[n] = read_gpu(n, t);
    if (t.has("calibration_from")) calibration_from_at[n] = t.where("calibration_from");
  });
  for (const auto& [name, where] : calibration_from_at) {
    check_calibration_from(c.gpus_, name, where);
    GpuSpec& g = c.gpus_[name];
    g.calibration_from_hbm_bandwidth = c.gpus_.at(g.calibration_from).hbm_bandwidth;
  }
  const std::string instances_path = (fs::path(dir) / "instances.toml").string();
  for_each_entry(instances_path, [&](const std::string& n, StrictTable& t) {
    InstanceSpec i = read_instance(n, t);
    if (!c.gpus_.count(i.gpu)) {
      throw InputError(t.where("gpu"), t.name("gpu"), "\"" + i.gpu + "\"", "a GPU defined in gpus.toml");
    }
    c.instances_[n] = std::move(i);
  });
  for_each_entry((fs::path(dir) / "models.toml").string(),
                 [&](const std::string& n, StrictTable& t) { c.models_[n] = read_model(n, t); });
  for_each_entry((fs::path(dir) / "dispatchers.toml").string(), [&](const std::string& n, StrictTable& t) {
    c.dispatchers_[n] = read_dispatcher(n, t, c.instances_);
  });
  const std::string stacks_path = (fs::path(dir) / "stacks.toml").string();
  for_each_entry(stacks_path, [&](const std::string& n, StrictTable& t) {
    bool is_default = false;
    StackSpec s = read_stack(n, t, is_default);
    if (is_default) {
      if (!c.default_stack_.empty()) {
        throw InputError(t.where("default"), t.name("default"), "true",
                         "one default stack only (" + c.default_stack_ + " is the default already)");
      }
      c.default_stack_ = n;
    }
    for (const std::string& campaign : s.campaigns) {
      if (const StackSpec* other = c.stack_of_campaign(campaign)) {
        throw InputError(t.where("campaigns"), t.name("campaigns"), "\"" + campaign + "\"",
                         "a campaign of one stack only (also listed by " + other->name + ")");
      }
    }
    c.stacks_[n] = std::move(s);
  });
  if (c.default_stack_.empty()) {
    throw InputError({stacks_path, 0}, "default", "missing", "one stack marked default = true");
  }
  return c;
}

const GpuSpec& Catalog::gpu(const std::string& name) const {
  return lookup(gpus_, name, "gpu", dir_);
}
const InstanceSpec& Catalog::instance(const std::string& name) const {
  return lookup(instances_, name, "instance", dir_);
}
const ModelSpec& Catalog::model(const std::string& name) const {
  return lookup(models_, name, "model", dir_);
}
const DispatcherSpec& Catalog::dispatcher(const std::string& name) const {
  return lookup(dispatchers_, name, "dispatcher", dir_);
}

const StackSpec& Catalog::stack(const std::string& name) const {
  return lookup(stacks_, name, "stack", dir_);
}

const StackSpec* Catalog::stack_of_campaign(const std::string& campaign) const {
  for (const auto& [name, s] : stacks_) {
    for (const std::string& c : s.campaigns) {
      if (c == campaign) return &s;
    }
  }
  return nullptr;
}

const StackSpec& Catalog::default_stack() const {
  return stack(default_stack_);
}

double p2p_net_chunk_bytes(const StackSpec& stack, const NcclKnobs& knobs, const InstanceSpec& instance) {
  if (knobs.p2p_net_chunk_bytes > 0) return knobs.p2p_net_chunk_bytes;
  if (stack.nccl_env.p2p_net_chunk_bytes > 0) return stack.nccl_env.p2p_net_chunk_bytes;
  if (stack.ofi_platform_aws && instance.ofi_platform_p2p_chunk_bytes > 0)
    return instance.ofi_platform_p2p_chunk_bytes;
  return kNcclDefaultP2pNetChunkBytes;
}

const char* to_string(AttentionKind kind) {
  return kind == AttentionKind::mla ? "mla" : kind == AttentionKind::mha ? "mha" : "gqa";
}
const char* to_string(RouterScore score) {
  return score == RouterScore::sigmoid ? "sigmoid" : "softmax";
}
const char* to_string(Fabric fabric) {
  return fabric == Fabric::infiniband ? "infiniband" : "efa";
}
const char* to_string(FlexBackend backend) {
  switch (backend) {
    case FlexBackend::deepep:
      return "deepep";
    case FlexBackend::hybridep:
      return "hybridep";
    case FlexBackend::none:
      break;
  }
  return "none";
}
bool DispatcherSpec::runs_on(Fabric fabric) const {
  return fabrics.empty() || std::find(fabrics.begin(), fabrics.end(), fabric) != fabrics.end();
}
const char* to_string(DispatcherTransport transport) {
  switch (transport) {
    case DispatcherTransport::nccl:
      return "nccl";
    case DispatcherTransport::cpu_proxy:
      return "cpu-proxy";
    case DispatcherTransport::host_proxy:
      return "host-proxy";
    case DispatcherTransport::gpu_initiated:
      return "gpu-initiated";
  }
  return "unknown";
}

}  // namespace moetwin
