// --profile, shared by every command that predicts.
#include "commands.hpp"

namespace moetwin::cli {

void add_profile_option(CLI::App* cmd, std::string& profile) {
  cmd->add_option("--profile", profile,
                  "Fitted profile (TOML from `validate --fit`); default " + default_fitted_profile_path() +
                      ", `none` for the unfitted defaults");
}

}  // namespace moetwin::cli
