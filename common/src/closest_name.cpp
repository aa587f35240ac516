#include "moetwin/common/closest_name.hpp"

#include <algorithm>

#include "moetwin/common/concat.hpp"

namespace moetwin {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // Three rows of the dynamic-programming table: the swap looks two rows back.
  std::vector<std::size_t> two(m + 1), one(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) one[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[m];
}

std::string closest_name(const std::string& typo, const std::vector<std::string>& candidates) {
  constexpr std::size_t kMaxEdits = 2;
  std::string best;
  std::size_t best_d = kMaxEdits + 1;
  for (const std::string& c : candidates) {
    if (c == typo) continue;
    const std::size_t d = edit_distance(typo, c);
    const std::size_t longer = std::max(typo.size(), c.size());
    if (d < best_d && 3 * d <= longer) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& typo, const std::vector<std::string>& candidates) {
  const std::string c = closest_name(typo, candidates);
  return c.empty() ? std::string() : concat({" (did you mean `", c, "`?)"});
}

}  // namespace moetwin
