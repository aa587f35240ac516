// What the fuzz targets that validate against the shipped catalog share: the catalog, loaded once per
// fuzzer process (MOETWIN_FUZZ_CATALOG_DIR, set by moetwin_add_fuzz_target).
#pragma once

#include "moetwin/catalog/catalog.hpp"

namespace moetwin_fuzz {

inline const moetwin::Catalog& catalog() {
  static const moetwin::Catalog c = moetwin::Catalog::load(MOETWIN_FUZZ_CATALOG_DIR);
  return c;
}

}  // namespace moetwin_fuzz
