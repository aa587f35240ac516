#include "moetwin/engine/symmetry.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <tuple>

namespace moetwin {

namespace {

using ChannelRow = std::array<std::int32_t, kChannelKinds + 1>;  // colour, then the channel colour per kind

// A multiplicative mix per value: only a bucket key, equality is always checked exactly.
template <class T>
std::uint64_t hash_durations(const T* v, std::size_t n) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<std::uint64_t>(v[i])) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return h;
}

// Colour 0: program, channel kinds held, per-rank durations (exact). Colours numbered by lowest rank.
// `durations`: the workload's var_durations in their stored width.
template <class T>
std::vector<std::int32_t> initial_colours(const Workload& w, const T* durations) {
  const int n = w.ranks();
  std::vector<std::int32_t> colour(static_cast<std::size_t>(n), -1);
  std::vector<std::int32_t> first_rank;  // colour -> lowest rank
  std::map<std::tuple<std::int32_t, std::uint32_t, std::uint64_t>, std::vector<std::int32_t>> buckets;
  // Ranks may share one row of durations (the builder stores one per class of equal ranks): each row is
  // hashed once, and a shared row is equal without comparing its values.
  std::map<std::pair<std::int64_t, std::size_t>, std::uint64_t> row_hash;  // (offset, slots) -> hash
  for (int r = 0; r < n; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const std::int32_t prog = w.rank_program[ru];
    const auto slots = static_cast<std::size_t>(w.programs[static_cast<std::size_t>(prog)].var_slots());
    const T* var = durations + w.var_offset[ru];
    std::uint32_t mask = 0;
    for (int k = 0; k < kChannelKinds; ++k) {
      if (w.rank_channels[ru * kChannelKinds + static_cast<std::size_t>(k)] >= 0) mask |= 1u << k;
    }
    const auto [row, fresh] = row_hash.try_emplace({w.var_offset[ru], slots}, 0);
    if (fresh) row->second = hash_durations(var, slots);
    auto& bucket = buckets[std::make_tuple(prog, mask, row->second)];
    for (std::int32_t c : bucket) {
      const T* other =
          durations + w.var_offset[static_cast<std::size_t>(first_rank[static_cast<std::size_t>(c)])];
      if (other == var || std::equal(var, var + slots, other)) {
        colour[ru] = c;
        break;
      }
    }
    if (colour[ru] < 0) {
      colour[ru] = static_cast<std::int32_t>(first_rank.size());
      first_rank.push_back(r);
      bucket.push_back(colour[ru]);
    }
  }
  return colour;
}

std::vector<std::int32_t> initial_colours(const Workload& w) {
  return w.var_durations.with_data([&](const auto* durations) { return initial_colours(w, durations); });
}

}  // namespace

RankSymmetry find_rank_symmetry(const Workload& w) {
  const int n = w.ranks();
  const std::size_t channels = w.channel_size.size();
  RankSymmetry out;
  std::vector<std::int32_t> colour = initial_colours(w);
  int colours = n == 0 ? 0 : 1 + *std::max_element(colour.begin(), colour.end());

  // Channel members as (rank, kind), in rank order (CSR).
  std::vector<std::int64_t> offset(channels + 1, 0);
  for (std::int32_t ch : w.rank_channels) {
    if (ch >= 0) ++offset[static_cast<std::size_t>(ch) + 1];
  }
  for (std::size_t c = 0; c < channels; ++c) offset[c + 1] += offset[c];
  std::vector<std::int64_t> fill(offset.begin(), offset.end() - 1);
  std::vector<std::int32_t> member_slot(static_cast<std::size_t>(offset[channels]));  // rank * K + kind
  for (std::size_t slot = 0; slot < w.rank_channels.size(); ++slot) {
    const std::int32_t ch = w.rank_channels[slot];
    if (ch >= 0)
      member_slot[static_cast<std::size_t>(fill[static_cast<std::size_t>(ch)]++)] =
          static_cast<std::int32_t>(slot);
  }

  std::vector<std::int32_t> channel_colour(channels, -1);
  std::vector<std::int32_t> channel_sig_size;
  for (;;) {
    ++out.refinement_rounds;
    // A channel's colour: the set of (member colour, member kind) pairs.
    std::map<std::vector<std::int64_t>, std::int32_t> sig_ids;
    channel_sig_size.clear();
    std::vector<std::int64_t> sig;
    for (std::size_t c = 0; c < channels; ++c) {
      sig.clear();
      for (std::int64_t m = offset[c]; m < offset[c + 1]; ++m) {
        const std::int32_t slot = member_slot[static_cast<std::size_t>(m)];
        const std::int32_t rank = slot / kChannelKinds;
        sig.push_back(static_cast<std::int64_t>(colour[static_cast<std::size_t>(rank)]) * kChannelKinds +
                      slot % kChannelKinds);
      }
      std::sort(sig.begin(), sig.end());
      sig.erase(std::unique(sig.begin(), sig.end()), sig.end());
      const auto [it, inserted] = sig_ids.emplace(sig, static_cast<std::int32_t>(sig_ids.size()));
      if (inserted) channel_sig_size.push_back(static_cast<std::int32_t>(sig.size()));
      channel_colour[c] = it->second;
    }
    // A rank's new colour: its colour and the colours of its channels.
    std::map<ChannelRow, std::int32_t> row_ids;
    std::vector<std::int32_t> next(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      ChannelRow row;
      row[0] = colour[ru];
      for (int k = 0; k < kChannelKinds; ++k) {
        const std::int32_t ch = w.rank_channels[ru * kChannelKinds + static_cast<std::size_t>(k)];
        row[static_cast<std::size_t>(k) + 1] = ch < 0 ? -1 : channel_colour[static_cast<std::size_t>(ch)];
      }
      next[ru] = row_ids.emplace(row, static_cast<std::int32_t>(row_ids.size())).first->second;
    }
    const int next_colours = static_cast<int>(row_ids.size());
    // Refinement only splits classes: the same count means the same partition (and, numbered by lowest
    // rank, the same colour ids), so the channel colours above are those of the final partition.
    if (next_colours == colours) break;
    colour = std::move(next);
    colours = next_colours;
  }

  out.class_of = std::move(colour);
  out.representative.assign(static_cast<std::size_t>(colours), -1);
  out.class_channels.assign(static_cast<std::size_t>(colours) * kChannelKinds, -1);
  for (int r = 0; r < n; ++r) {
    const auto cls = static_cast<std::size_t>(out.class_of[static_cast<std::size_t>(r)]);
    if (out.representative[cls] >= 0) continue;
    out.representative[cls] = r;
    for (std::size_t k = 0; k < static_cast<std::size_t>(kChannelKinds); ++k) {
      const std::int32_t ch = w.rank_channels[static_cast<std::size_t>(r) * kChannelKinds + k];
      out.class_channels[cls * kChannelKinds + k] =
          ch < 0 ? -1 : channel_colour[static_cast<std::size_t>(ch)];
    }
  }
  out.channel_size = std::move(channel_sig_size);
  for (std::int32_t rep : out.representative) {
    if (rep < 0) throw std::logic_error("find_rank_symmetry: class without a representative");
  }
  return out;
}

}  // namespace moetwin
