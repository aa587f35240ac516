// Attention kernels for the calibration profile: the CSV that calibrate/scripts/torch_layer_probe.py
// --attention-sweep prints on the calibration node (cuDNN causal attention, one row per direction and
// shape) -> the profile's [attention_kernel."<fwd|bwd>.q<QK>v<V>"] curves: efficiency (fraction of the
// bf16 peak) vs FLOPs per call, linear in log2(flops) (calibration_profile.hpp).
//
// Why FLOPs per call: on the H200 sweep (calibrate/data/h200-attention.csv) calls of equal FLOPs reach
// the same efficiency whatever their split into heads and sequence length (8 heads x 8,192 tokens and 32 x
// 4,096 at q/k = v = 128: 0.426 and 0.447 of peak), while rows (heads x tokens) alone do not separate a
// long sequence from many heads (0.14-0.32 at 32,768 rows).
//
// The fit: per (direction, q/k, v, grouped KV) the efficiencies of equal-FLOPs calls averaged, ascending
// in FLOPs; rows with fewer KV heads than query heads make the ".gqa" curves (the replay applies their
// ratio to the multi-head curves, compute_model.hpp). Each point is then predicted from the curve without
// it (leave one out), and the GQA rows by the multi-head curve of their dims, for the report.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "moetwin/profile/calibration_profile.hpp"

namespace moetwin {

struct AttentionPoint {
  int line = 0;  // in the CSV, for messages
  bool backward = false;
  int qk_dim = 0;
  int v_dim = 0;
  int heads = 0;
  int kv_heads = 0;
  int seq = 0;
  double flops = 0;    // Megatron-Core's causal count of the call
  double seconds = 0;  // median time of the call
};

// Strict reading: the columns direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops,median_s (others are
// an error), values in range (direction fwd|bwd, dims 1..1024, heads >= kv_heads >= 1 dividing heads,
// flops > 0, 0 < median_s < 100). InputError naming file, line, column, value and what was expected.
std::vector<AttentionPoint> read_attention_csv(const std::string& path);

struct AttentionCurveReport {
  std::string key;        // attention_kernel_key
  int calls = 0;          // CSV rows behind the curve
  int points = 0;         // distinct FLOPs
  double loo_median = 0;  // |predicted / measured time - 1| with the point left out
  double loo_max = 0;
  int gqa_checked = 0;    // GQA rows of these head dims predicted by the curve
  double gqa_median = 0;  // their |error|, signed mean below (> 0: predicted too slow)
  double gqa_mean_signed = 0;
};

// The curves of `points` as efficiencies of `peak_flops` (the profile's peak_bf16_flops), with one report
// per curve when `report` is given. InputError ({path, 0}) when no row has kv_heads = heads.
std::map<std::string, LogCurve> fit_attention_kernels(const std::vector<AttentionPoint>& points,
                                                      double peak_flops, const std::string& path,
                                                      std::vector<AttentionCurveReport>* report = nullptr);

}  // namespace moetwin
