// Unit-test support: the repository's shipped data as the tests read it, loaded once per test process, one
// copy for every module's tests instead of a loader in each test file. Header-only: moetwin_add_test links
// moetwin_test_support into every test and defines MOETWIN_SOURCE_DIR. A test includes the header of the
// floor it uses: this one needs catalog/, shipped_scenario.hpp scenarios/, shipped_profile.hpp sim/.
#pragma once

#include <string>

#include "moetwin/catalog/catalog.hpp"

#ifndef MOETWIN_SOURCE_DIR
#error "shipped_catalog.hpp needs MOETWIN_SOURCE_DIR (moetwin_add_test defines it)"
#endif

namespace moetwin::test_support {

// The repository root, and a path below it ("scenarios/default.toml").
inline const std::string kSourceDir = MOETWIN_SOURCE_DIR;
inline std::string source_path(const std::string& relative) {
  return kSourceDir + "/" + relative;
}

// The shipped catalog (catalog/data), loaded on first use.
inline const Catalog& catalog() {
  static const Catalog c = Catalog::load(source_path("catalog/data"));
  return c;
}

}  // namespace moetwin::test_support
