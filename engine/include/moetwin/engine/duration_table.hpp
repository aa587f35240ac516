// Per-rank durations of var-slot ops (Workload::var_durations): integer ns, stored in 32 bits while every
// value fits and in 64 bits from the first one that does not (a single op of more than 2.1 s). A skewed
// 4,096-GPU DeepSeek-V3 replay holds 29 M of them: 116 MB narrow instead of 232 MB, and the engine's
// slot-major copy (replay_engine.hpp) follows the same width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <vector>

#include "moetwin/common/time.hpp"

namespace moetwin {

class DurationTable {
 public:
  DurationTable() = default;
  DurationTable(std::initializer_list<TimeNs> values) { assign(values); }
  DurationTable& operator=(std::initializer_list<TimeNs> values) {
    assign(values);
    return *this;
  }

  void reserve(std::size_t n) { wide_ ? wide_values_.reserve(n) : narrow_values_.reserve(n); }
  // Appends one duration (>= 0 ns; std::logic_error otherwise).
  void push_back(TimeNs ns) {
    if (ns < 0) throw std::logic_error("DurationTable: negative duration");
    if (!wide_ && ns > std::numeric_limits<std::int32_t>::max()) widen();
    if (wide_) {
      wide_values_.push_back(ns);
    } else {
      narrow_values_.push_back(static_cast<std::int32_t>(ns));
    }
  }
  std::size_t size() const { return wide_ ? wide_values_.size() : narrow_values_.size(); }
  TimeNs operator[](std::size_t i) const { return wide_ ? wide_values_[i] : narrow_values_[i]; }
  bool wide() const { return wide_; }
  // Calls `f` with a pointer to the values in their stored width (const std::int32_t* or const TimeNs*):
  // loops over many values read them without a branch per value.
  template <class F>
  decltype(auto) with_data(F&& f) const {
    return wide_ ? f(wide_values_.data()) : f(narrow_values_.data());
  }

 private:
  void assign(std::initializer_list<TimeNs> values) {
    wide_ = false;
    narrow_values_.clear();
    wide_values_.clear();
    for (const TimeNs v : values) push_back(v);
  }
  void widen() {
    wide_values_.assign(narrow_values_.begin(), narrow_values_.end());
    narrow_values_ = {};
    wide_ = true;
  }

  bool wide_ = false;
  std::vector<std::int32_t> narrow_values_;
  std::vector<TimeNs> wide_values_;
};

}  // namespace moetwin
