// toml++'s implementation (its parser, nodes and tables), compiled here once for every library that reads
// TOML through strict_toml.hpp, which declares it with TOML_HEADER_ONLY 0.
#define TOML_IMPLEMENTATION 1
#include "moetwin/catalog/strict_toml.hpp"
