// Symmetry reduction of a Workload: ranks that provably run the same time line are replayed once.
//
// Ranks are partitioned into classes (the coarsest stable partition, by colour refinement):
//  - members of a class run the same Program with the same per-rank (var slot) durations and hold
//    channels of the same kinds;
//  - for every channel kind, the channel of every member has the same signature: the set of
//    (class, kind) pairs of its members (multiplicity dropped).
// Replaying one representative per class is then exact: a rendezvous starts at the latest arrival and
// lasts the longest member duration, both maxima over members, and a maximum does not change when equal
// values are repeated. By induction over events every member of a class has its representative's time
// line, so the iteration time and every rank's stats are the representative's. Channels of the reduced
// replay are the distinct signatures; their members are the representatives of the classes in them (a
// collective inside one class becomes a one-member rendezvous of the same duration).
//
// With balanced routing (the live runs' forced load balancing) the ranks of a pipeline stage usually form
// one class; with skewed routing every rank may be its own class and the replay is the full one.
#pragma once

#include <cstdint>
#include <vector>

#include "moetwin/engine/program.hpp"

namespace moetwin {

struct RankSymmetry {
  std::vector<std::int32_t> class_of;        // rank -> class; classes numbered by their lowest rank
  std::vector<std::int32_t> representative;  // class -> its lowest rank
  // class * kChannelKinds + kind -> channel id of the reduced replay, -1 when the class has none.
  std::vector<std::int32_t> class_channels;
  std::vector<std::int32_t> channel_size;  // reduced channel -> members (distinct (class, kind) pairs)
  int refinement_rounds = 0;               // colour-refinement rounds until the partition was stable

  int classes() const { return static_cast<int>(representative.size()); }
};

// The classes of a validated workload (deterministic: ordered maps, exact comparisons, no hashing of
// pointers). Cost: O(ranks x var slots) to compare durations plus a few refinement rounds over channel
// memberships.
RankSymmetry find_rank_symmetry(const Workload& workload);

}  // namespace moetwin
