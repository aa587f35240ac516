// "Did you mean ...?" for a misspelt name: the known name closest to a typo by edit distance.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace moetwin {

// Optimal string alignment distance (Levenshtein plus the swap of two neighbouring characters, each one
// edit), case-sensitive: "micro_bach" -> "micro_batch" is 1, "mciro_batch" -> "micro_batch" is 1.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `typo`, or "" when none is close enough to be a typo of it: at most 2 edits,
// and at most a third of the longer name's length (so "ep" is no typo of "tp", nor "nodes" of "model").
// Ties go to the first candidate in the given order. `typo` itself never counts as a suggestion.
std::string closest_name(const std::string& typo, const std::vector<std::string>& candidates);

// " (did you mean `NAME`?)" for closest_name's answer, or "" when there is none.
std::string did_you_mean(const std::string& typo, const std::vector<std::string>& candidates);

}  // namespace moetwin
