#include "moetwin/sweep/profile_predictor.hpp"

#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {
namespace {

// Predictions as `moetwin predict` makes them: the profile's SimProfile and the routing + dispatcher
// MoE cost (predict_options_for), with the profile's cross-validated uncertainty band.
class ProfilePredictor final : public SweepPredictor {
 public:
  explicit ProfilePredictor(FittedProfile profile) : profile_(std::move(profile)) {}
  PredictOptions options_for(const Scenario& scenario) const override {
    PredictOptions options = predict_options_for(scenario, profile_);
    options.setup_cache = setup_;
    return options;
  }
  bool band(const Scenario& scenario, const PredictOptions& used, double predicted_s, double& lo_s,
            double& hi_s) const override {
    const UncertaintyBand b = a2a_term_spread(scenario, profile_, predicted_s, used).band;
    lo_s = b.lo_s;
    hi_s = b.hi_s;
    return true;
  }
  std::string a2a_terms(const Scenario& scenario) const override {
    return a2a_terms_label(profile_, scenario.dispatcher.name);
  }
  Novelty novelty(const Scenario& scenario) const override { return novelty_of(scenario, profile_); }

 private:
  FittedProfile profile_;
  // Calibration lookups and collective models shared by the sweep's points (one catalog; the points of
  // a node count and instance share one; prediction_setup.hpp).
  std::shared_ptr<const PredictionSetupCache> setup_ = std::make_shared<const PredictionSetupCache>();
};

}  // namespace

std::unique_ptr<SweepPredictor> make_profile_predictor(const std::string& spec, ProfileInfo& info,
                                                       const std::string& network) {
  FittedProfile profile = resolve_fitted_profile(spec);
  info = ProfileInfo{};
  info.path = profile.path;
  if (!profile.path.empty()) info.hash = hex64(fnv1a64(read_text_file(profile.path)));
  if (!network.empty()) {
    const std::optional<NetworkMode> mode = network_mode_from_string(network);
    if (!mode) throw InputError({"", 0}, "--network", network, "closed-form or flow");
    profile.sim.network = *mode;
    info.hash += "+network=" + network;
  }
  return std::make_unique<ProfilePredictor>(std::move(profile));
}

}  // namespace moetwin
