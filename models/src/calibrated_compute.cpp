// Catalog roofline + calibration profile -> the compute profile a prediction uses (calibrated_compute.hpp).
#include "moetwin/models/calibrated_compute.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"

#ifndef MOETWIN_CALIBRATION_DIR
#define MOETWIN_CALIBRATION_DIR "calibrate/profiles"
#endif
#ifndef MOETWIN_SOURCE_ROOT
#define MOETWIN_SOURCE_ROOT ""
#endif

namespace moetwin {

namespace {

namespace fs = std::filesystem;

// Paths inside the source tree are shown relative to it ("calibrate/profiles/h200-measured.toml").
std::string display_path(const std::string& path) {
  const std::string root = std::string(MOETWIN_SOURCE_ROOT) + "/";
  if (root.size() > 1 && path.compare(0, root.size(), root) == 0) return path.substr(root.size());
  return path;
}

// Parsed profiles by path, re-read when the file's size or modification time changes. Sweeps predict
// from several threads, hence the mutex; the map is keyed by path, so iteration order never matters.
struct CachedProfile {
  std::uintmax_t size = 0;
  fs::file_time_type mtime;
  std::shared_ptr<const CalibrationProfile> profile;
};

std::shared_ptr<const CalibrationProfile> load_cached(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, CachedProfile> cache;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InputError({path, 0}, "cannot read the calibration profile (" + ec.message() + ")");
  const fs::file_time_type mtime = fs::last_write_time(path, ec);
  if (ec) throw InputError({path, 0}, "cannot read the calibration profile (" + ec.message() + ")");
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(path);
    if (it != cache.end() && it->second.size == size && it->second.mtime == mtime) return it->second.profile;
  }
  // Parse outside the lock (InputErrors propagate and nothing is cached for a bad file).
  auto parsed = std::make_shared<const CalibrationProfile>(load_calibration_profile(path));
  const std::lock_guard<std::mutex> lock(mutex);
  cache[path] = {size, mtime, parsed};
  return parsed;
}

// The first *.toml of `dir` (file name order) measured on `gpu`, like find_calibration_profile.
std::string find_profile_path(const std::string& dir, const std::string& gpu) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".toml")
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    if (load_cached(f)->gpu == gpu) return f;
  }
  return "";
}

GemmEfficiencyCurve to_curve(const GemmCurve& g) {
  GemmEfficiencyCurve c;
  c.min_dim = g.efficiency.x;
  c.efficiency = g.efficiency.y;
  c.floor_s = g.floor_s;
  c.memory_efficiency = g.memory_efficiency;
  c.hidden_floor_s = g.hidden_floor_s;
  return c;
}

// One set of a profile's GEMM curves (`gemm` or `gemm_fp8`, named `section`) as the simulator's
// calibration, efficiencies of `peak_flops`. InputError when no op class has a plain curve.
ComputeCalibration calibration_of(const std::map<std::string, GemmCurve>& curves, const std::string& section,
                                  double peak_flops, const CalibrationProfile& profile,
                                  const std::string& path) {
  ComputeCalibration cal;
  cal.path = path;
  cal.gpu = profile.gpu;
  cal.peak_flops = peak_flops;
  cal.copy_bandwidth = profile.d2d_bandwidth;
  const OpClass classes[] = {OpClass::gemm, OpClass::grouped_gemm, OpClass::attention};
  bool any = false;
  for (const OpClass cls : classes) {
    const int c = static_cast<int>(cls);
    const std::string key = to_string(cls);
    if (const auto it = curves.find(key); it != curves.end()) {
      cal.curve[c] = to_curve(it->second);
      any = true;
    }
    if (const auto it = curves.find(key + ".small_k"); it != curves.end())
      cal.small_k[c] = to_curve(it->second);
  }
  if (!any) {
    const std::string t = "[" + section + ".\"";
    throw InputError({path, 0}, section, "no curve",
                     "a " + t + "gemm\"], " + t + "grouped_gemm\"] or " + t + "attention\"] curve");
  }
  return cal;
}

// `c.profile`, measured on the scenario GPU's catalog calibration_from (the catalog checked that both are
// the same die: tensor-core peaks, SMs, NVLink), made the scenario GPU's: the GEMM curves are fractions of
// the same peak and the NVLink bands the same links, so they stay; the measured device-to-device copy
// rate, which bounds the memory-bound GEMMs (memory_efficiency term), scales with HBM bandwidth.
void borrow(ScenarioCalibration& c, const Scenario& scenario) {
  const GpuSpec& gpu = scenario.gpu;
  const double ratio = gpu.hbm_bandwidth / gpu.calibration_from_hbm_bandwidth;
  auto copy = std::make_shared<CalibrationProfile>(*c.profile);
  copy->d2d_bandwidth *= ratio;
  c.profile = std::move(copy);
  char factor[32];
  std::snprintf(factor, sizeof factor, "%.3f", ratio);
  c.borrowed = gpu.calibration_from + "'s, for " + gpu.name + ": same die, memory-bound rates x " + factor;
}

// A profile of the GPU itself without [nvlink] (one GPU measured: no NCCL across GPUs) takes the NVLink
// bands of its catalog calibration_from GPU's profile in `dir`, when that one has them: the catalog allows
// calibration_from only between GPUs of the same NVLink generation and bandwidth.
void nvlink_from_lender(ScenarioCalibration& c, const std::string& dir, const std::string& lender) {
  const std::string path = find_profile_path(dir, lender);
  if (path.empty()) return;
  std::shared_ptr<const CalibrationProfile> p = load_cached(path);
  if (!p->nvlink) return;
  c.nvlink_profile = std::move(p);
  c.nvlink_shown_path = display_path(path);
}

}  // namespace

std::string default_calibration_dir() {
  const char* env = std::getenv("MOETWIN_CALIBRATION_DIR");
  if (env != nullptr && *env != '\0') return env;
  return MOETWIN_CALIBRATION_DIR;
}

ComputeProfile apply_calibration(ComputeProfile base, const CalibrationProfile& profile,
                                 const std::string& path) {
  ComputeCalibration cal = calibration_of(profile.gemm, "gemm", profile.peak_bf16_flops, profile, path);
  if (!(cal.peak_flops > 0)) throw InputError({path, 0}, "peak_bf16_flops", "0", "a peak > 0");
  // FP8 curves where the profile has them ([gemm_fp8], optional): fp8_kernel_seconds uses them, else the
  // FP8 roofline. The bf16 source string stays: FP8 is an addition to the same measured profile.
  if (!profile.gemm_fp8.empty()) {
    ComputeCalibration fp8 =
        calibration_of(profile.gemm_fp8, "gemm_fp8", profile.peak_fp8_flops, profile, path);
    if (!(fp8.peak_flops > 0)) throw InputError({path, 0}, "gemm_fp8 peak_flops", "0", "a peak > 0");
    base.fp8_calibration = std::move(fp8);
  }
  for (const auto& [key, curve] : profile.attention_kernels) {
    // The parser accepted only well-formed keys; a hand-built profile may not have.
    const std::optional<AttentionKernelKey> k = parse_attention_kernel_key(key);
    if (!k)
      throw InputError({path, 0}, "attention_kernel", key, "a key \"fwd.q<QK>v<V>\" or \"bwd.q<QK>v<V>\"");
    AttentionKernelCurve a;
    a.backward = k->backward;
    a.grouped_kv = k->grouped_kv;
    a.head_width = k->qk_dim + k->v_dim;
    a.flops = curve.x;
    a.efficiency = curve.y;
    cal.attention_kernels.push_back(std::move(a));
  }
  base.source = "calibrated (" + display_path(path) + ", " + profile.gpu + ")";
  base.calibration = std::move(cal);
  return base;
}

ScenarioCalibration calibration_for(const Scenario& scenario, const std::string& dir) {
  ScenarioCalibration out;
  const std::string& spec = scenario.calibration_profile;
  if (spec == "none") {
    out.why_not = "scenario [calibration] profile = \"none\"";
    return out;
  }
  if (spec.empty()) {
    if (dir.empty()) {
      out.why_not = "calibration lookup off";
      return out;
    }
    out.path = find_profile_path(dir, scenario.gpu.name);
    if (out.path.empty() && !scenario.gpu.calibration_from.empty())
      out.path = find_profile_path(dir, scenario.gpu.calibration_from);
    if (out.path.empty()) {
      out.why_not = "no calibration profile for " + scenario.gpu.name;
      return out;
    }
    out.profile = load_cached(out.path);
    out.shown_path = display_path(out.path);
    if (out.profile->gpu != scenario.gpu.name) {
      borrow(out, scenario);
    } else if (!out.profile->nvlink && !scenario.gpu.calibration_from.empty()) {
      nvlink_from_lender(out, dir, scenario.gpu.calibration_from);
    }
    return out;
  }
  const bool is_name = spec.find('/') == std::string::npos && fs::path(spec).extension() != ".toml";
  if (is_name && dir.empty()) {
    throw InputError({scenario.source, 0}, "calibration.profile", spec,
                     "a profile path (the calibration lookup is off, so names cannot be resolved)");
  }
  out.path = is_name ? (fs::path(dir) / (spec + ".toml")).string() : spec;
  std::error_code ec;
  if (!fs::is_regular_file(out.path, ec)) {
    throw InputError({scenario.source, 0}, "calibration.profile", spec,
                     "an existing calibration profile (" + out.path + " not found)");
  }
  out.profile = load_cached(out.path);
  const bool borrowed =
      !scenario.gpu.calibration_from.empty() && out.profile->gpu == scenario.gpu.calibration_from;
  if (out.profile->gpu != scenario.gpu.name && !borrowed) {
    throw InputError(
        {out.path, 0}, "gpu", out.profile->gpu,
        "a profile for the scenario's GPU " + scenario.gpu.name +
            (scenario.gpu.calibration_from.empty() ? "" : " or for " + scenario.gpu.calibration_from));
  }
  out.shown_path = display_path(out.path);
  if (borrowed) {
    borrow(out, scenario);
  } else if (!out.profile->nvlink && !scenario.gpu.calibration_from.empty() && !dir.empty()) {
    nvlink_from_lender(out, dir, scenario.gpu.calibration_from);
  }
  return out;
}

ComputeProfile compute_profile_for(const Scenario& scenario, const std::string& dir) {
  return compute_profile_from(scenario, calibration_for(scenario, dir));
}

ComputeProfile compute_profile_from(const Scenario& scenario, const ScenarioCalibration& c) {
  ComputeProfile base = ComputeProfile::from_gpu(scenario.gpu);
  if (!c.profile) {
    base.source = "catalog efficiencies (" + c.why_not + ")";
    return base;
  }
  ComputeProfile out = apply_calibration(std::move(base), *c.profile, c.path);
  if (!c.borrowed.empty()) out.source = "calibrated (" + display_path(c.path) + ", " + c.borrowed + ")";
  return out;
}

}  // namespace moetwin
