// The hardware, model and dispatcher catalog: published facts with their sources, loaded from the
// TOML data files in catalog/data/ (never code constants). All quantities in SI units.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace moetwin {

// A catalog value believed but not read in a source (shared/design/nvl72-and-infiniband.md marks such values
// UNVERIFIED): carried as an assumption with the bounds it is believed to lie in and why. The entry's key
// `unverified.<key> = { min = .., max = .., why = ".." }` names a numeric key of the same entry; the loader
// checks that the key exists and its value lies inside the bounds (in the file's units).
struct Assumption {
  std::string key;   // the entry's key, e.g. "base_latency_us"
  double value = 0;  // the value used, file units
  double min = 0;
  double max = 0;
  std::string why;
};

// One GPU model (dense peak rates, no sparsity). Source: vendor datasheets, see catalog/data/gpus.toml.
struct GpuSpec {
  std::string name;       // e.g. "H200-SXM"
  double bf16_flops = 0;  // dense BF16 peak, FLOP/s
  double fp8_flops = 0;   // dense FP8 peak, FLOP/s
  double fp4_flops = 0;   // dense NVFP4 (E2M1, 16-element block scales) peak, FLOP/s; 0 = no FP4 cores
  // NVFP4 GEMMs' fraction of the FP4 peak over BF16 GEMMs' fraction of the BF16 peak at the same shapes
  // (measured: gpus.toml); scales the class efficiency for FP4 (compute_model.hpp). 0 without FP4.
  double fp4_relative_efficiency = 0;
  // The same for FP8 GEMMs at the FP8 peak: per-tensor scaled (delayed, current, blockwise) and MX
  // block-scaled (measured on B300: gpus.toml). 1 where not measured (FP8 at the BF16 fraction); GPUs with
  // measured FP8 curves (calibration profiles) do not use them.
  double fp8_relative_efficiency = 1;
  double mxfp8_relative_efficiency = 1;
  double hbm_bytes = 0;         // HBM capacity, bytes (decimal GB as marketed x 1e9)
  double hbm_bandwidth = 0;     // HBM bandwidth, bytes/s
  int nvlink_gen = 0;           // NVLink generation
  double nvlink_bandwidth = 0;  // per-GPU NVLink bandwidth per direction, bytes/s (marketed bidir / 2)
  int sms = 0;                  // streaming multiprocessors
  bool mxfp8 = false;           // tensor cores with MX block scaling (Blackwell); FP8 recipes need fp8_flops
  // CUDA compute capability (9.0 Hopper, 10.0 B200/GB200, 10.3 B300/GB300): software gates on it
  // (Megatron-Bridge's flex-dispatcher backends, dispatcher_gate.hpp).
  double compute_capability = 0;
  // One GPU of a Grace-Blackwell superchip (GB200, GB300: NVL72 members) rather than a discrete HGX/DGX GPU;
  // Megatron-Bridge gates DeepEP on it.
  bool grace_superchip = false;
  // Achievable fraction of peak per op class, used by the roofline compute model until calibration
  // data exists. Keys: "gemm", "grouped_gemm", "attention", "elementwise" (of HBM bandwidth).
  std::map<std::string, double> efficiency;
  // A GPU of the same die (same SMs, clocks, tensor-core peaks and NVLink) whose calibration profile
  // serves this one while it has none of its own, with its memory-bound rates scaled by the HBM
  // bandwidths (calibrated_compute.hpp). Empty: catalog efficiencies until this GPU is measured.
  std::string calibration_from;
  double calibration_from_hbm_bandwidth = 0;  // that GPU's HBM bandwidth, bytes/s (set by the catalog)
  std::vector<Assumption> unverified;         // values used without a source, with their bounds
  std::string source;
};

// The scale-out fabric of an instance. Both are modelled by the same network terms (per-GPU injection =
// nics_per_gpu x NIC bandwidth, base latency per message): the collective models are generic in them.
//   efa:        AWS Elastic Fabric Adapter (SRD), generation efa_gen, through aws-ofi-nccl.
//   infiniband: NVIDIA ConnectX NICs on an InfiniBand rail-optimised fat tree (DGX systems), NCCL's own IB
//               transport; GPU-initiated RDMA (IBGDA) available to NVSHMEM.
enum class Fabric { efa, infiniband };

// One instance type (EC2 instance or DGX system / NVL72 compute tray): a node of the simulated cluster.
struct InstanceSpec {
  std::string name;             // e.g. "p5en.48xlarge"
  std::string gpu;              // GpuSpec::name
  int gpus = 0;                 // GPUs per node
  Fabric fabric = Fabric::efa;  // scale-out fabric
  int efa_gen = 0;              // EFA generation; 0 on InfiniBand
  int efa_nics = 0;             // scale-out NICs per node (EFA, or InfiniBand's ib_nics)
  std::string ib_generation;    // "NDR" (400 Gb/s) or "XDR" (800 Gb/s) on InfiniBand; "" on EFA
  // GPUs of one NVLink domain (NVSwitch fabric): = gpus for an 8-GPU node, 72 for an NVL72 rack whose
  // node is a 4-GPU compute tray. Ranks share NVLink iff they lie in the same consecutive block of this
  // many GPUs (torchrun order); read it through nvlink_domain_gpus(instance), which maps an unset 0 to
  // the node.
  int nvlink_domain_gpus = 0;
  double nic_bandwidth = 0;  // per NIC, per direction, bytes/s (Gb/s / 8 x 1e9)
  int nics_per_gpu = 0;      // NICs with affinity to each GPU (rails)
  // Throughput of a transfer whose sending and receiving NICs sit on different rails (NIC k to a remote
  // NIC j != k: through the upper switch tiers) over a rail-aligned one, fraction. EFA: measured on p5 and
  // p5en (raw SRD all-to-all, uccl ep/bench/alltoall; validate/data/efa-rdma-alltoall.csv); 1 on InfiniBand
  // (rail-optimised fat tree, full bisection) and where the key is absent.
  double cross_rail_efficiency = 1;
  double host_memory_bytes = 0;     // host DRAM, bytes
  bool gpu_initiated_rdma = false;  // EFA-GDA: GPU can post RDMA work requests (NCCL GIN type 5)
  double base_latency_s = 0;        // aws-ofi-nccl tuner base latency hint, seconds
  double price_usd_per_hour = 0;    // on-demand price; 0 = unknown
  std::string price_source;         // where and when the price was read
  // NCCL_P2P_NET_CHUNKSIZE that aws-ofi-nccl's platform-aws code sets for this instance when the plugin
  // was built with it (src/platform-aws.cpp, 1.16+), bytes; 0 = it sets none (NCCL's 128 KiB stays).
  double ofi_platform_p2p_chunk_bytes = 0;
  // Host CPU: launch and Python time per op scale with its single-thread speed.
  std::string cpu;                     // e.g. "Intel Xeon Platinum 8559C"
  int cpu_cores = 0;                   // physical cores per node
  double cpu_single_thread_score = 0;  // Geekbench 6 single-core (see cpu_source)
  std::string cpu_source;
  // The GPU's link to host memory, which CPU offload of activations copies over (training.cpu_offload_layers;
  // sim/include/moetwin/sim/cpu_offload.hpp): "pcie-gen5-x16" (x86 hosts: the GPU's PCIe Gen5 x16 port) or
  // "nvlink-c2c" (Grace superchips); "" = not in the catalog (offload is refused there). Its rate per GPU and
  // direction, bytes/s, with where the number comes from.
  std::string host_link;
  double host_link_bandwidth = 0;
  std::string host_link_source;
  std::vector<Assumption> unverified;  // values used without a source, with their bounds
  std::string source;
};

// GPUs of `instance`'s NVLink domain: its nvlink_domain_gpus, or the node (gpus) when unset (a spec built
// by hand). Every NVLink-vs-network decision of topology, models and sim reads this, not gpus.
inline int nvlink_domain_gpus(const InstanceSpec& instance) {
  return instance.nvlink_domain_gpus > instance.gpus ? instance.nvlink_domain_gpus : instance.gpus;
}

// mla: DeepSeek multi-head latent attention; gqa: grouped-query attention; mha: standard multi-head
// attention (GQA with one KV group per head: query_groups = heads).
enum class AttentionKind { mla, gqa, mha };
enum class RouterScore { softmax, sigmoid };

// One MoE (or dense) transformer, in Megatron-Core's terms. See shared/design/model-flops.md.
struct ModelSpec {
  std::string name;
  int layers = 0;        // transformer layers L (decoder blocks, excluding MTP)
  int dense_layers = 0;  // first-k dense layers L_d (moe_layer_freq / first_k_dense_replace)
  int hidden = 0;        // h
  int ffn_hidden = 0;    // dense FFN size f (SwiGLU: 3 matrices of h x f)
  // Attention
  AttentionKind attention = AttentionKind::gqa;
  int heads = 0;         // query heads n
  int query_groups = 0;  // GQA KV groups g (== heads for MHA); unused for MLA
  int head_dim = 0;      // GQA head dim c (kv_channels); unused for MLA
  int q_lora_rank = 0;   // MLA q-LoRA rank r_q; 0 = no q compression
  int kv_lora_rank = 0;  // MLA kv-LoRA rank r_kv
  int qk_head_dim = 0;   // MLA d_qk (no-rope part)
  int qk_rope_dim = 0;   // MLA d_r
  int v_head_dim = 0;    // MLA d_v
  // Sliding-window attention (GQA/MHA only): a windowed layer's query attends to the `sliding_window`
  // latest keys (itself included: HF gpt-oss `sliding_window`; Megatron-Core window_size = (w, 0) admits
  // one more, a 1/w difference left out). 0 = every layer attends causally to the whole sequence.
  int sliding_window = 0;  // tokens
  // Every `full_attention_every`-th layer (1-based: layer index i is full iff (i + 1) % n == 0) keeps full
  // causal attention, the others are windowed: Megatron-Core window_attn_skip_freq; gpt-oss alternates
  // (n = 2: layer 0 windowed, layer 1 full, ...). 0 with a window = every layer windowed.
  int full_attention_every = 0;
  // Attention sinks (gpt-oss): one learned logit per head joins each softmax denominator (TE softmax_type
  // "learnable"). n parameters per layer; the FLOPs (one exp per score row) are below Megatron's count.
  bool attention_sinks = false;
  // MoE
  int experts = 0;            // routed experts E (0 = dense model)
  int expert_ffn_hidden = 0;  // f_e
  int shared_ffn_hidden = 0;  // f_s = shared experts x their FFN size (0 if none)
  int top_k = 0;              // k
  RouterScore router_score = RouterScore::softmax;
  int router_groups = 0;       // group-limited routing: n_group (0 = not group-limited)
  int router_topk_groups = 0;  // topk_group
  // Vocabulary and extras
  int vocab = 0;                 // raw vocabulary size
  int vocab_pad_multiple = 128;  // Megatron make_vocab_size_divisible_by (padded to this x tp)
  int mtp_layers = 0;            // multi-token-prediction layers M
  bool tied_embeddings = false;
  std::string source;
  // Exact, every field (the workload template key, workload_template_cache.hpp).
  bool operator==(const ModelSpec&) const = default;
};

enum class DispatcherTransport {
  nccl,           // NCCL all-to-all via aws-ofi-nccl
  cpu_proxy,      // UCCL-EP: GPU pushes commands to CPU proxy threads posting RDMA writes
  host_proxy,     // NVSHMEM libfabric host proxy (single thread, fences)
  gpu_initiated,  // the GPU posts RDMA work requests itself: NCCL GIN on EFA-GDA, NVSHMEM IBGDA on InfiniBand
};

// The backend Megatron-Bridge's flex dispatcher is asked for (--moe-flex-dispatcher-backend); none for
// Megatron's alltoall dispatcher. Megatron-Bridge gates each on the GPU (dispatcher_gate.hpp).
enum class FlexBackend { none, deepep, hybridep };

// Mechanism facts of one token dispatcher (no fitted numbers here; those live in profiles).
// One named, bounded parameter of a cost model: unit, bounds a fitter respects, and where the value comes
// from. A dispatcher's terms are its record's [[<name>.terms]] in dispatchers.toml.
struct ModelParam {
  std::string name;  // e.g. "rdma_efficiency"
  std::string unit;  // "s", "fraction", "tokens", "count", "bytes"
  double value = 0;
  double min = 0;  // bounds the fitter respects
  double max = 0;
  bool fitted = false;  // calibrated on kernel benchmarks (see `source` for which)
  std::string source;   // publication, documentation, or the calibration run that set it
  // Scope: "" = every instance; else the catalog instance whose measurements set this value. A scoped term
  // overrides the unscoped term of the same name on that instance only (a CPU proxy's cost per RDMA write
  // is the instance's: its CPU and its NICs), so a value measured on one instance is never applied to
  // another.
  std::string instance;
};

struct DispatcherSpec {
  std::string name;           // nccl-alltoall, deepep-uccl, deepep-nvshmem, deepep-v2-gin
  std::string description;    // one line
  std::string megatron_flag;  // e.g. "--moe-token-dispatcher-type alltoall"
  DispatcherTransport transport = DispatcherTransport::nccl;
  bool node_dedup = false;        // token sent once per destination node, fanned out over NVLink
  bool fused_permute = false;     // permute fused into the dispatch kernel
  int sms = 0;                    // SMs occupied while the normal kernels run (0 = NCCL channels)
  int proxy_threads_per_gpu = 0;  // CPU proxy threads (UCCL: 4; NVSHMEM: 1)
  int max_ranks_normal = 0;       // validity limit of normal kernels (0 = none)
  int max_ranks_low_latency = 0;  // validity limit of low-latency kernels on EFA (0 = none)
  // Transport to fall back to on instances without GPU-initiated RDMA (deepep-v2-gin on p5).
  DispatcherTransport fallback_transport = DispatcherTransport::nccl;
  bool needs_gpu_initiated_rdma = false;
  // Scale-out fabrics the dispatcher's transport runs on (empty: any). NVSHMEM's libfabric host proxy is
  // EFA's path (deepep-nvshmem); IBGDA needs ConnectX NICs (deepep-ibgda).
  std::vector<Fabric> fabrics;
  FlexBackend flex_backend = FlexBackend::none;
  // How far the dispatcher's own NVLink stage reaches: the host node (DeepEP v1: CUDA-IPC peers of one host,
  // NUM_MAX_NVL_PEERS = 8) or the whole NVLink domain (NCCL over MNNVL; HybridEP's TMA copies). Beyond it the
  // tokens go over the NICs. Read through a2a_nvlink_reach_gpus (models/comm_cost.hpp).
  bool reaches_nvlink_domain = false;
  // DeepEP API generation of a node_dedup record (1: v1 Buffer, 2: v2 ElasticBuffer); 0 otherwise. The
  // standalone benchmarks of the two count GB/s on different legs (validate/kernel_bench.cpp).
  int deepep_version = 0;
  std::string source;
  std::vector<ModelParam> terms;  // its cost model's parameters, in file order

  // Whether the transport runs on `fabric` (fabrics empty, or listed).
  bool runs_on(Fabric fabric) const;
};

// NCCL environment settings that change a mechanism (0 / "" = NCCL's default or the plugin's).
struct NcclKnobs {
  int max_nchannels = 0;           // NCCL_MAX_NCHANNELS; 0 = unset
  std::string algo;                // NCCL_ALGO, e.g. "Ring"; "" = unset (collectives only)
  std::string proto;               // NCCL_PROTO, e.g. "Simple"; "" = unset (collectives only)
  double p2p_net_chunk_bytes = 0;  // NCCL_P2P_NET_CHUNKSIZE, bytes; 0 = unset
  double buffsize_bytes = 0;       // NCCL_BUFFSIZE, bytes; 0 = unset
  // NCCL_PXN_DISABLE=1: sends leave through the rank's own NIC, (G-1)/G of them across rails
  // (models/rails.hpp); false = NCCL's default PXN (P2P_PXN_LEVEL 2).
  bool pxn_disable = false;
};

// One software stack: the versions a run used and what follows from them for the mechanisms
// (catalog/data/stacks.toml, each with its source).
struct StackSpec {
  std::string name;  // e.g. "nemo-26.04.01"
  std::string description;
  std::string megatron_core, megatron_bridge, megatron_lm, nccl, aws_ofi_nccl, transformer_engine, torch;
  std::string deepep, uccl, nvshmem;  // "" = not known / not used
  // aws-ofi-nccl configured with --enable-platform-aws: the instance's platform defaults apply
  // (InstanceSpec::ofi_platform_p2p_chunk_bytes); without it NCCL's own defaults stay.
  bool ofi_platform_aws = false;
  // aws-ofi-nccl multi-receive (1.20+, on by default; before it needed NCCL_OFI_EAGER_MAX_SIZE=-1): one
  // posted receive matches several peers' messages, which its release notes say "improves alltoall
  // performance". No live run measured a stack with it, so the NCCL per-chunk cost (net_chunk_s), fitted on
  // stacks without it, is applied unchanged and predictions say so (a2a-mechanisms.md section 6).
  bool ofi_multi_recv = false;
  NcclKnobs nccl_env;  // what the stack's launcher sets
  // How this stack's published runs configure Megatron's alltoall dispatcher:
  // --moe-pad-expert-input-to-capacity (drop-and-pad at capacity factor 1: equal splits, no token-count
  // all-gather, no host sync) instead of dropless.
  bool alltoall_pad_to_capacity = false;
  // Megatron overlap_p2p_comm (with batch_p2p_comm False) as this stack's runs set it: the interleaved
  // schedule posts its P2P asynchronously (sim/include/moetwin/sim/schedule.hpp). Key absent = false,
  // Megatron-Core's ModelParallelConfig default; what each stack sets and why: stacks.toml.
  bool overlap_p2p_comm = false;
  // Live-run campaigns that ran on it: their rows without a `stack` column belong to it.
  std::vector<std::string> campaigns;
  std::string source;
};

class StrictTable;
// Reads the knob keys of a table (stacks.toml [<stack>.nccl_env], a scenario's [stack]): nccl_max_nchannels
// (1..64), nccl_algo, nccl_proto (NCCL's names), nccl_p2p_net_chunksize_kib (4..16384),
// nccl_buffsize_mib; absent keys stay unset. Marks them read; the caller finishes the table.
NcclKnobs read_nccl_knobs(StrictTable& t);

// NCCL's default P2P net chunk (NCCL_P2P_NET_CHUNKSIZE, src/init.cc computeBuffSizes), bytes.
inline constexpr double kNcclDefaultP2pNetChunkBytes = 128.0 * 1024.0;
// The P2P network chunk a stack runs with on `instance`: the knob if set, else the plugin's platform
// default when built with platform-aws and the instance has one, else NCCL's default.
double p2p_net_chunk_bytes(const StackSpec& stack, const NcclKnobs& knobs, const InstanceSpec& instance);

// The whole catalog. Lookups throw InputError naming the unknown entry and listing the known ones.
class Catalog {
 public:
  // Loads gpus.toml, instances.toml, models.toml, dispatchers.toml and stacks.toml from `dir`.
  // Throws InputError (file:line: key: value: expected) on any malformed entry or unknown key.
  static Catalog load(const std::string& dir);
  // The catalog directory: $MOETWIN_CATALOG if set, else the source tree's catalog/data.
  static std::string default_dir();
  // The catalog of default_dir(), loaded once per process (thread-safe): for code that resolves a
  // catalog name it was handed as data (a fitted profile's per-dispatcher keys). Throws as load().
  static const Catalog& shared_default();

  const GpuSpec& gpu(const std::string& name) const;
  const InstanceSpec& instance(const std::string& name) const;
  const ModelSpec& model(const std::string& name) const;
  const DispatcherSpec& dispatcher(const std::string& name) const;
  const StackSpec& stack(const std::string& name) const;
  // The stack whose `campaigns` list `campaign`; nullptr when none does.
  const StackSpec* stack_of_campaign(const std::string& campaign) const;
  // The stack a scenario without a [stack] table runs on (stacks.toml's `default = true` entry).
  const StackSpec& default_stack() const;

  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, InstanceSpec>& instances() const { return instances_; }
  const std::map<std::string, ModelSpec>& models() const { return models_; }
  const std::map<std::string, DispatcherSpec>& dispatchers() const { return dispatchers_; }
  const std::map<std::string, StackSpec>& stacks() const { return stacks_; }

 private:
  std::string dir_;
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, InstanceSpec> instances_;
  std::map<std::string, ModelSpec> models_;
  std::map<std::string, DispatcherSpec> dispatchers_;
  std::map<std::string, StackSpec> stacks_;
  std::string default_stack_;
};

const char* to_string(AttentionKind kind);
const char* to_string(RouterScore score);
const char* to_string(DispatcherTransport transport);
const char* to_string(Fabric fabric);
const char* to_string(FlexBackend backend);

}  // namespace moetwin
