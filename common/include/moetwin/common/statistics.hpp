// Order statistics shared by the fitters and importers.
#pragma once

#include <vector>

namespace moetwin {

// Median of `values` (the mean of the two middle values for an even count). Throws std::logic_error
// on an empty set: a median of nothing is a caller's bug, never a number to print.
double median_of(std::vector<double> values);

}  // namespace moetwin
