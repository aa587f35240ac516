// Provenance fields that need no GPU or fabric library.
#include <unistd.h>

#include <array>
#include <ctime>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin {

Provenance base_provenance(const std::string& tool) {
  Provenance p;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) p.host = host.data();
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  p.time_utc = stamp.data();
  p.git_revision = kGitRevision;
  p.tool = tool;
  return p;
}

}  // namespace moetwin
