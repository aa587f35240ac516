#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "unknown";
}

const char* to_string(RoutingKind kind) {
  switch (kind) {
    case RoutingKind::balanced:
      return "balanced";
    case RoutingKind::zipf:
      return "zipf";
    case RoutingKind::group_limited:
      return "group-limited";
    case RoutingKind::histogram:
      return "histogram";
  }
  return "unknown";
}

}  // namespace moetwin
