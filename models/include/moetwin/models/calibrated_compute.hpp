// The compute profile a prediction uses: the catalog GPU's roofline, with the GEMM curves of its
// calibration profile (calibrate/profiles/*.toml, `moetwin-calibrate fit`) when one was measured for
// that GPU. GPUs without measurements fall back to catalog efficiencies, and the profile's `source`
// says which: "calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)" or
// "catalog efficiencies (no calibration profile for B300)".
//
// Only calibrate/profiles/*.toml are read, never subfolders: calibrate/profiles/fitted/ holds the
// end-to-end fitted profile (fitted_profile.hpp), a different format.
#pragma once

#include <memory>
#include <string>

#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

struct CalibrationProfile;  // moetwin/profile/calibration_profile.hpp (library moetwin::profile)

// $MOETWIN_CALIBRATION_DIR if set, else calibrate/profiles of the source tree.
std::string default_calibration_dir();

// `base` (normally ComputeProfile::from_gpu) with the profile's GEMM curves attached. Throws
// InputError naming `path` when the profile's curves cannot serve the simulator (no peak, no curve).
ComputeProfile apply_calibration(ComputeProfile base, const CalibrationProfile& profile,
                                 const std::string& path);

// The calibration profile `scenario` uses (rules below), parsed and cached; null when none applies,
// with the reason in why_not ("no calibration profile for B300", "calibration lookup off", ...).
struct ScenarioCalibration {
  std::shared_ptr<const CalibrationProfile> profile;
  std::string path;
  std::string shown_path;  // `path` relative to the source tree when inside it, for reports
  std::string why_not;
  // Set when the profile was measured on the GPU's catalog `calibration_from` (same die, other HBM):
  // "H200-SXM's, for H100-SXM: same die, memory-bound rates x 0.698". `profile` is then a copy with
  // its memory-bound rates (d2d_copy_bandwidth, the GEMM curves' memory term) scaled by the HBM ratio.
  std::string borrowed;
  // NVLink bands for the collectives when `profile` has none but the GPU's catalog calibration_from GPU has a
  // profile with them (same NVLink generation and bandwidth: catalog check). The H100 measured on one GPU has
  // no NCCL over several GPUs, so it keeps the H200's 2- and 4-GPU bands. Null otherwise.
  std::shared_ptr<const CalibrationProfile> nvlink_profile;
  std::string nvlink_shown_path;
};
ScenarioCalibration calibration_for(const Scenario& scenario, const std::string& dir);

// The compute profile for `scenario`: its [calibration] profile decides.
//   ""           -> the profile in `dir` whose gpu is the scenario's GPU, else the one of its catalog
//                   calibration_from GPU (borrowed, as above), else catalog efficiencies; the GPU's own
//                   profile without [nvlink] takes its calibration_from GPU's NVLink bands (nvlink_profile);
//   "none"       -> catalog efficiencies;
//   "NAME"       -> `dir`/NAME.toml (no '/' and no ".toml" in NAME);
//   a path       -> that file.
// A named profile must exist and be for the scenario's GPU or its calibration_from GPU. `dir` empty: lookup
// off (catalog). Malformed profile files are InputErrors naming file, line and key. Parsed files are cached
// per (path, size, mtime), safe across threads.
ComputeProfile compute_profile_for(const Scenario& scenario, const std::string& dir);
// The same from a lookup already made (a prediction looks up once for compute and collectives).
ComputeProfile compute_profile_from(const Scenario& scenario, const ScenarioCalibration& calibration);

}  // namespace moetwin
