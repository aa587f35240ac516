// Placeholder until the fitter lands.
#include "commands.hpp"

namespace moetwin::calibrate_cli {
void add_fit_command(CLI::App& /*app*/) {}
}  // namespace moetwin::calibrate_cli
