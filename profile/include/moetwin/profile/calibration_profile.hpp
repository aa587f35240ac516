// A calibration profile: what the simulator needs from a calibration database, as plain data.
// Written by the fitter (`moetwin-calibrate fit`) as a versioned TOML file under calibrate/profiles/,
// read here without HDF5 or CUDA, so sim can depend on this library alone (moetwin::calibrate_profile).
//
//   GEMM time  t = max(floor_s, floor_s - hidden_floor_s + max(flops / (peak_bf16_flops *
//   efficiency(min_dim)),
//                                                              bytes / (d2d_bandwidth * memory_efficiency)))
//              (calibrated_gemm_seconds below: the one implementation, also the fitter's and sim's)
//              floor_s: the time of a call too small to matter (launch-bound), s. hidden_floor_s
//              (schema 3): the part of floor_s that runs concurrently with a larger call's GPU work when
//              calls are issued back to back (cuBLASLt's host-side setup and the launch, hidden behind
//              the previous call's kernel); the GPU itself adds only floor_s - hidden_floor_s to the
//              work. 0 = floor and work add up (schema <= 2).
//              bytes: bf16 operands + result (gemm_bytes); the memory term (schema 2) is what small-m
//              grouped GEMMs pay: they read every expert's weights for few tokens.
//              efficiency: piecewise linear in log2 of the GEMM's smallest dimension (per GEMM of a
//              batch), clamped at the ends; one curve per op class (gemm, grouped_gemm, attention).
//              A GEMM whose k is its strictly smallest dimension (weight gradients over few tokens)
//              uses the curve "<op>.small_k" when the profile has one: such GEMMs run at a lower
//              efficiency than ones whose m or n is as small (H200 run, calibrate/data/).
//   FP8 GEMM time (optional [gemm_fp8."<op>"] tables, since 2026-12-01): the same formula and curve keys
//              with peak_fp8_flops for the peak and gemm_fp8_bytes (E4M3 A and B, bf16 result) for the
//              bytes; measured with cuBLASLt E4M3 x E4M3 -> bf16, per-tensor scales, fp32 accumulate.
//   Attention kernels (optional [attention_kernel."<fwd|bwd>.q<QK>v<V>[.gqa]"] tables, 2026-12-02): the
//              fused causal attention core (cuDNN through scaled_dot_product_attention, as Transformer
//              Engine runs it on Hopper) per direction and head dims (q/k, v), efficiency (fraction of
//              peak_bf16_flops) piecewise linear in log2 of the call's FLOPs (Megatron-Core's causal
//              count: forward s^2 (qk + v) heads x batch, backward 2.5x), measured by
//              calibrate/scripts/torch_layer_probe.py --attention-sweep and read by `fit --attention-csv`.
//              Without them attention is priced as a GEMM of its shape (the [gemm."attention"] curves).
//   Kernel time t = bytes_moved / bandwidth(bytes_moved), piecewise linear in log2(bytes).
//   Transport  t = latency_s + bytes / bandwidth of the band holding `bytes` (SimGrid-style factors
//              by message-size band), per transport ("nccl.all_reduce.n8", "fabric.efa", ...).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moetwin {

// 2: GEMM curves carry memory_efficiency. Schema 1 files are still read (memory_efficiency 0).
// 3: GEMM curves carry hidden_floor_s. Schema 1 and 2 files are still read (hidden_floor_s 0).
// 4: [nvlink] efficiency bands by GPU count and per-rank buffer ([nvlink.efficiency.<op>.n<ranks>]);
//    schema <= 3 files keep their per-step-message bands ([nvlink.efficiency.<op>]) and behaviour.
// The optional [gemm_fp8.*] tables (2026-12-01) need no new schema: profiles without them read as before
// (no FP8 curves), and an older reader rejects them as unknown keys rather than misreading them.
inline constexpr int kCalibrationProfileSchemaVersion = 4;

// y at `value` on the points (x ascending, one y per x): linear in log2(x) between points, constant
// beyond the ends, 0 without points. The one implementation of the profile's curves (LogCurve::at and
// the simulator's GEMM efficiency curves, sim/src/compute_model.cpp).
double log2_interpolate(const std::vector<double>& x, const std::vector<double>& y, double value);

// y as a function of x, linear in log2(x) between points, constant beyond the ends. x ascending.
struct LogCurve {
  std::vector<double> x;
  std::vector<double> y;
  double at(double value) const { return log2_interpolate(x, y, value); }
};

struct GemmCurve {
  double floor_s = 0;   // fixed cost per call, s
  LogCurve efficiency;  // x = smallest dimension, y = fraction of peak_bf16_flops
  // Memory term (schema 2): the call takes at least bytes / (d2d_bandwidth * memory_efficiency) after
  // the floor, bytes = operands + result. 0 = no memory term (schema 1 profiles).
  double memory_efficiency = 0;
  // Floor overlap (schema 3): the part of floor_s hidden behind the GPU work of calls that take longer
  // than the floor, s, in [0, floor_s]. 0 = additive floor (schema 1 and 2 profiles).
  double hidden_floor_s = 0;
  // Held-back validation: shapes not used in the fit, relative time error |pred - meas| / meas.
  int heldout_shapes = 0;
  double heldout_median_error = 0;
  double heldout_max_error = 0;
  double heldout_within_5pct = 0;  // fraction of held-back shapes within 5 %
};

struct TransportBand {
  double min_bytes = 0;  // band holds messages >= min_bytes (up to the next band's)
  double latency_s = 0;
  double bandwidth = 0;  // bytes/s
};

struct TransportCurve {
  std::vector<TransportBand> bands;  // ascending min_bytes; the first band starts at 0
  double time_s(double bytes) const;
};

// NVLink collectives inside one node, fitted to the multi-GPU NCCL sweeps (calibrate/src/nvlink_fit.cpp)
// as parameters of the simulator's closed-form collective model (topology/collectives.hpp): time =
// call_latency_s + steps x step_latency_s + bus bytes / (NVLink bandwidth x factor). Schema >= 4:
// factor(op, GPU count, per-rank buffer), interpolated in log2(GPU count) between the measured counts
// and held at the nearest outside them; schema <= 3: factor(op, per-step message).
// Achieved fraction of a link's line rate by message size (SimGrid-style factor table).
struct EfficiencyBands {
  std::vector<double> min_bytes;  // message bands, ascending, the first at 0
  std::vector<double> factor;     // achieved / catalog per-direction bandwidth, (0, 1]
};

struct NvlinkCollectiveFit {
  std::vector<int> ranks;     // GPU counts the fit saw, ascending
  double call_latency_s = 0;  // per call
  double step_latency_s = 0;  // per ring step / pairwise exchange
  // Schema >= 4: op ("all_reduce", ...) -> measured GPU count -> bands by per-rank buffer (nccl-tests
  // size). Schema <= 3: `curves`, op -> bands by per-step message. A fit holds one of the two.
  std::map<std::string, std::map<int, EfficiencyBands>> buffer_curves;
  std::map<std::string, EfficiencyBands> curves;
  // How well the fitted model reproduces the measured points (relative time error).
  int points = 0;
  double median_error = 0;
  double max_error = 0;
  // Each point predicted with its own band left out (the curve falls back to the neighbouring
  // measured size): how well the bands interpolate between the x4-spaced sizes.
  double loo_median_error = 0;
  double loo_max_error = 0;
};

// EFA between two NICs (libfabric RDM, `moetwin-calibrate fabric --provider efa`) as the collective
// model's EFA terms for collectives that cross nodes (topology/collectives.hpp): step latency = the
// one-way small-message latency (ping-pong half round trip); efficiency bands = streamed bytes per
// second / the instance's per-NIC line rate, by message size.
struct EfaFabricFit {
  std::string instance;       // catalog instance whose NIC line rate the factors divide
  std::string buffer;         // "host" or "cuda": where the measured messages lived
  double step_latency_s = 0;  // one way, s
  EfficiencyBands efficiency;
  // Ping-pong points predicted as step_latency_s + bytes / (line rate x factor): relative error.
  int points = 0;
  double median_error = 0;
  double max_error = 0;
};

struct CalibrationProfile {
  int schema_version = kCalibrationProfileSchemaVersion;
  std::string gpu;           // catalog GPU name, e.g. "H200-SXM"
  std::string measured_gpu;  // as the driver named it, e.g. "NVIDIA H200"
  std::string source_db;     // database the profile was fitted from
  std::string git_revision;  // moetwin revision that measured
  std::string measured_at;   // UTC time of the measurement
  double peak_bf16_flops = 0;
  double launch_sync_s = 0;               // launch + wait for one empty kernel
  double launch_back_to_back_s = 0;       // per kernel, back-to-back launches
  double launch_graph_s = 0;              // per kernel inside a CUDA graph
  double d2d_bandwidth = 0;               // device-to-device copy, bytes read + written per second
  std::map<std::string, GemmCurve> gemm;  // op class -> curve
  // FP8 GEMM curves, same keys as `gemm`; efficiencies are fractions of peak_fp8_flops (the catalog's
  // dense FP8 peak, FLOP/s, > 0 whenever gemm_fp8 has curves). Empty: no FP8 measurement.
  std::map<std::string, GemmCurve> gemm_fp8;
  double peak_fp8_flops = 0;
  std::map<std::string, LogCurve> kernels;  // op -> bandwidth (bytes/s) vs bytes moved
  // "<fwd|bwd>.q<QK>v<V>[.gqa]" (attention_kernel_key) -> efficiency (fraction of peak_bf16_flops) vs FLOPs
  // per call. Empty: attention priced as a GEMM of its shape.
  std::map<std::string, LogCurve> attention_kernels;
  std::map<std::string, TransportCurve> transports;
  std::optional<NvlinkCollectiveFit> nvlink;  // absent: no measurement on >= 2 GPUs
  std::optional<EfaFabricFit> efa;            // absent: no fabric run over the efa provider

  // Predicted seconds of one GEMM call (batch > 1: strided-batched/grouped); nullopt when the op
  // class has no curve (the caller falls back to catalog efficiencies and says so).
  std::optional<double> gemm_time_s(const std::string& op, double m, double n, double k, double batch) const;
  // The same from the FP8 curves (peak_fp8_flops, gemm_fp8_bytes); nullopt without an FP8 curve.
  std::optional<double> gemm_fp8_time_s(const std::string& op, double m, double n, double k,
                                        double batch) const;
};

// What an attention-kernel curve was measured on: direction, q/k and v head dims (elements), and whether
// the KV heads were fewer than the query heads (grouped-query attention, measured at 8 query heads per
// KV head; key suffix ".gqa").
struct AttentionKernelKey {
  bool backward = false;
  int qk_dim = 0;
  int v_dim = 0;
  bool grouped_kv = false;
};
// "fwd.q192v128", "bwd.q128v128.gqa".
std::string attention_kernel_key(const AttentionKernelKey& key);
// The parts of such a key; nullopt when `key` is not of that form (dims in 1 .. 1024).
std::optional<AttentionKernelKey> parse_attention_kernel_key(const std::string& key);

// Bytes of one (batched) bf16 GEMM call: 2 x (m k + k n + m n) x batch.
double gemm_bytes(double m, double n, double k, double batch);
// Bytes of one (batched) FP8 GEMM call: E4M3 operands (1 byte) and a bf16 result, (m k + k n + 2 m n) x
// batch. The per-tensor scales (two floats) are left out. What fp8_kernel_seconds' callers should pass.
double gemm_fp8_bytes(double m, double n, double k, double batch);

// One call's time from a set of curves (`gemm` or `gemm_fp8`): the curve of gemm_curve_key, else the
// class's "<op>" curve, nullopt when neither exists or peak_flops <= 0. flops = 2 m n k batch.
std::optional<double> gemm_curves_time_s(const std::map<std::string, GemmCurve>& curves, double peak_flops,
                                         double copy_bandwidth, const std::string& op, double m, double n,
                                         double k, double batch, double bytes);

// The calibrated GEMM time of one call, written once: CalibrationProfile::gemm_time_s, the fitter's
// leave-one-out and held-back checks, and the simulator's kernel_seconds all call it.
//   t = max(floor_s, floor_s - hidden_floor_s
//                    + max(flops / (peak_flops x efficiency), bytes / (copy_bandwidth x memory_efficiency)))
// No memory term when memory_efficiency or copy_bandwidth is 0; hidden_floor_s 0: floor_s + work.
struct GemmTimeInputs {
  double floor_s = 0;            // time of a launch-bound call, s
  double hidden_floor_s = 0;     // part of floor_s that overlaps a longer call's work, s
  double efficiency = 0;         // the curve at the GEMM's smallest dimension, fraction of peak_flops
  double memory_efficiency = 0;  // fraction of copy_bandwidth; 0 = no memory term
  double peak_flops = 0;         // FLOP/s
  double copy_bandwidth = 0;     // device-to-device copy, bytes read + written per s
  double flops = 0;              // of the whole call (all GEMMs of a batch)
  double bytes = 0;              // operands + results of the whole call
};
double calibrated_gemm_seconds(const GemmTimeInputs& in);

// The curve a GEMM uses: "<op>.small_k" when k < m and k < n, else "<op>".
std::string gemm_curve_key(const std::string& op, double m, double n, double k);

// Strict reading: unknown keys, wrong types, unsorted or mismatched arrays -> InputError file:line.
CalibrationProfile parse_calibration_profile(const std::string& text, const std::string& path);
CalibrationProfile load_calibration_profile(const std::string& path);
std::string format_calibration_profile(const CalibrationProfile& profile);

// The profile for catalog GPU `gpu` in `dir` (the first *.toml, by file name, whose gpu matches), or
// nullopt: GPUs without measurements fall back to catalog efficiencies.
std::optional<CalibrationProfile> find_calibration_profile(const std::string& dir, const std::string& gpu);

}  // namespace moetwin
