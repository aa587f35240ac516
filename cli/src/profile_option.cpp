// --profile, shared by every command that predicts.
#include "commands.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::cli {

void add_profile_option(CLI::App* cmd, std::string& profile) {
  cmd->add_option("--profile", profile,
                  "Fitted profile (TOML from `validate --fit`); default " + default_fitted_profile_path() +
                      ", `none` for the unfitted defaults");
}

std::string profile_label(const FittedProfile& p) {
  if (!p.fitted) return "unfitted defaults (no fitted profile)";
  std::string s = p.path + " (fitted " + p.fitted_at + " on " + p.fitted_on;
  if (p.cross_validated.rows > 0) {
    s += "; " + p.cv_scheme + " median |error| " + format_fixed(p.cross_validated.median_abs * 100, 1) +
         "%, p90 " + format_fixed(p.cross_validated.p90_abs * 100, 1) + "%";
  }
  return s + ")";
}

}  // namespace moetwin::cli
