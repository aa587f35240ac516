// Time in the simulator: integer nanoseconds, and the one rule that turns a modelled duration in seconds
// into them. Integer time makes event order exact (no two runs disagree on which of two events is first);
// 1 ns is below every measured quantity the twin uses (the smallest, a kernel launch, is ~2-5 us).
#pragma once

#include <cstdint>

namespace moetwin {

using TimeNs = std::int64_t;

// Seconds -> ns, rounded up so a modelled cost never shrinks to zero, except that values within 1e-6 ns
// of an integer are that integer (binary floating point makes 1e-4 s x 1e9 into 100000.00000000001).
// Throws std::logic_error for a negative or non-finite time: a cost model produced nonsense.
TimeNs to_ns(double seconds);

// A time already in ns (a transfer's bytes over its rate) rounded up to an integer, except that values
// within float noise above an integer count as that integer (remaining / rate can come out as
// 1000.0000000001 for an exact 1000): the tolerance is max(1e-6 ns, 1e-13 x |ns|), ~500 ulp of a double.
// The network models and the engine's flow model share it. Throws std::overflow_error beyond ~292 years.
TimeNs ceil_ns(double ns);

}  // namespace moetwin
