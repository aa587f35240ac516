// --profile, --network and --hbm-headroom, shared by every command that predicts.
#include "commands.hpp"
#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::cli {

void add_profile_option(CLI::App* cmd, std::string& profile) {
  cmd->add_option("--profile", profile,
                  "Fitted profile (TOML from `validate --fit`); default " + default_fitted_profile_path() +
                      ", `none` for the unfitted defaults");
}

void add_network_option(CLI::App* cmd, std::string& network) {
  cmd->add_option(
         "--network", network,
         "Network model of the replay: closed-form (each collective for its closed-form time) | flow "
         "(transfers share GPUs' NVLink ports and EFA rails, max-min fair); default: the one the "
         "profile was fitted under")
      ->check(CLI::IsMember({"closed-form", "flow"}));
}

void add_hbm_headroom_option(CLI::App* cmd, double& headroom) {
  cmd->add_option("--hbm-headroom", headroom,
                  "Share of HBM to keep free beyond the memory model's estimate (default " +
                      format_exact(kDefaultHbmHeadroom) +
                      ": the model's shortfall against measured peaks and allocator fragmentation; "
                      "accounting/README.md). Above it: a warning; plan ranks such options last")
      ->check(CLI::Range(0.0, kMaxHbmHeadroom));
}

FittedProfile resolve_profile_choice(const std::string& profile, const std::string& network) {
  FittedProfile p = resolve_fitted_profile(profile);
  if (network.empty()) return p;
  const std::optional<NetworkMode> mode = network_mode_from_string(network);
  if (!mode) throw InputError({"", 0}, "--network", network, "closed-form or flow");
  p.sim.network = *mode;
  return p;
}

}  // namespace moetwin::cli
