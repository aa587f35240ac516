// libFuzzer target for the HDF5 calibration database: the bytes build a database (names, kinds, units,
// parameters, labels, samples and provenance strings of any content, NaN and infinities included), which
// is written and read back through a scratch file; what comes back must equal what was written. Raw
// mutated HDF5 files would fuzz libhdf5's own parser, not moetwin's reader, so the structure comes from
// the bytes instead. InputError (a name or value the writer refuses) ends an input; any other exception, a
// crash, a leak, undefined behaviour or a difference after the round trip is a bug.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_file.hpp"
#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/common/input_error.hpp"

namespace {

bool same_number(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

bool same(const moetwin::Experiment& a, const moetwin::Experiment& b) {
  if (a.name != b.name || a.kind != b.kind || a.unit != b.unit || a.labels != b.labels ||
      a.params.size() != b.params.size() || a.samples.size() != b.samples.size())
    return false;
  for (auto i = a.params.begin(), j = b.params.begin(); i != a.params.end(); ++i, ++j)
    if (i->first != j->first || !same_number(i->second, j->second)) return false;
  for (std::size_t i = 0; i < a.samples.size(); ++i)
    if (!same_number(a.samples[i], b.samples[i])) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = moetwin_fuzz::scratch_path(".h5");
  FuzzedDataProvider in(data, size);
  moetwin::CalibrationDb db;
  db.provenance.gpu_name = in.ConsumeRandomLengthString(40);
  db.provenance.gpu_count = in.ConsumeIntegral<std::int64_t>();
  db.provenance.sm_clock_hz = in.ConsumeFloatingPoint<double>();
  db.provenance.tool = in.ConsumeRandomLengthString(40);
  const int experiments = in.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < experiments; ++i) {
    moetwin::Experiment e;
    e.name = in.ConsumeRandomLengthString(40);
    e.kind = in.ConsumeRandomLengthString(20);
    e.unit = in.ConsumeRandomLengthString(8);
    const int params = in.ConsumeIntegralInRange(0, 4);
    for (int k = 0; k < params; ++k)
      e.params[in.ConsumeRandomLengthString(16)] = in.ConsumeFloatingPoint<double>();
    const int labels = in.ConsumeIntegralInRange(0, 4);
    for (int k = 0; k < labels; ++k)
      e.labels[in.ConsumeRandomLengthString(16)] = in.ConsumeRandomLengthString(24);
    const int samples = in.ConsumeIntegralInRange(0, 16);
    for (int k = 0; k < samples; ++k) e.samples.push_back(in.ConsumeFloatingPoint<double>());
    try {
      db.put(std::move(e));
    } catch (const std::invalid_argument&) {
      // A name the database refuses ('/', empty): put() says so, as documented.
    }
  }
  try {
    moetwin::write_calibration_db(db, path);
  } catch (const moetwin::InputError&) {
    return 0;
  }
  moetwin::CalibrationDb back;
  try {
    back = moetwin::read_calibration_db(path);
  } catch (const moetwin::InputError&) {
    __builtin_trap();  // the reader refused what the writer wrote
  }
  if (!(back.provenance == db.provenance) && !(std::isnan(db.provenance.sm_clock_hz))) __builtin_trap();
  if (back.experiments.size() != db.experiments.size()) __builtin_trap();
  for (auto i = db.experiments.begin(), j = back.experiments.begin(); i != db.experiments.end(); ++i, ++j)
    if (i->first != j->first || !same(i->second, j->second)) __builtin_trap();
  return 0;
}
