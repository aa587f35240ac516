// HDF5 reading and writing of the calibration database (layout in calibration_db.hpp).
#include "moetwin/calibrate/calibration_db.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

constexpr const char* kFormat = "moetwin-calibration";
constexpr const char* kParamPrefix = "param:";
constexpr const char* kLabelPrefix = "label:";

H5::StrType string_type() {
  return H5::StrType(H5::PredType::C_S1, H5T_VARIABLE);
}

void put_string(H5::H5Object& object, const std::string& key, const std::string& value) {
  H5::DataSpace scalar(H5S_SCALAR);
  const H5::StrType type = string_type();
  H5::Attribute attribute = object.createAttribute(key, type, scalar);
  attribute.write(type, value);
}

void put_double(H5::H5Object& object, const std::string& key, double value) {
  H5::DataSpace scalar(H5S_SCALAR);
  H5::Attribute attribute = object.createAttribute(key, H5::PredType::NATIVE_DOUBLE, scalar);
  attribute.write(H5::PredType::NATIVE_DOUBLE, &value);
}

void put_int(H5::H5Object& object, const std::string& key, std::int64_t value) {
  H5::DataSpace scalar(H5S_SCALAR);
  H5::Attribute attribute = object.createAttribute(key, H5::PredType::NATIVE_INT64, scalar);
  attribute.write(H5::PredType::NATIVE_INT64, &value);
}

// All attributes of an object, read as strings or doubles (integers are widened to double).
struct AttributeSet {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
};

AttributeSet read_attributes(const H5::H5Object& object) {
  AttributeSet out;
  const int n = object.getNumAttrs();
  for (int i = 0; i < n; ++i) {
    H5::Attribute attribute = object.openAttribute(static_cast<unsigned>(i));
    const std::string name = attribute.getName();
    const H5T_class_t cls = attribute.getTypeClass();
    if (cls == H5T_STRING) {
      std::string value;
      attribute.read(attribute.getStrType(), value);
      out.strings[name] = value;
    } else if (cls == H5T_INTEGER) {
      std::int64_t value = 0;
      attribute.read(H5::PredType::NATIVE_INT64, &value);
      out.numbers[name] = static_cast<double>(value);
    } else if (cls == H5T_FLOAT) {
      double value = 0;
      attribute.read(H5::PredType::NATIVE_DOUBLE, &value);
      out.numbers[name] = value;
    }
  }
  return out;
}

std::string string_or_empty(const AttributeSet& set, const std::string& key) {
  const auto it = set.strings.find(key);
  return it == set.strings.end() ? std::string() : it->second;
}

double number_or_zero(const AttributeSet& set, const std::string& key) {
  const auto it = set.numbers.find(key);
  return it == set.numbers.end() ? 0.0 : it->second;
}

void write_provenance(H5::H5File& file, const Provenance& p) {
  H5::Group group = file.createGroup("/provenance");
  put_string(group, "gpu_name", p.gpu_name);
  put_int(group, "gpu_count", p.gpu_count);
  put_int(group, "sm_count", p.sm_count);
  put_double(group, "sm_clock_hz", p.sm_clock_hz);
  put_double(group, "mem_clock_hz", p.mem_clock_hz);
  put_string(group, "driver_version", p.driver_version);
  put_string(group, "cuda_version", p.cuda_version);
  put_string(group, "cublas_version", p.cublas_version);
  put_string(group, "nccl_version", p.nccl_version);
  put_string(group, "libfabric_version", p.libfabric_version);
  put_string(group, "provider", p.provider);
  put_string(group, "host", p.host);
  put_string(group, "time_utc", p.time_utc);
  put_string(group, "git_revision", p.git_revision);
  put_string(group, "tool", p.tool);
}

// Counts are read back through a double (read_attributes): exact up to 2^53, and a larger value (a crafted
// file) would overflow the cast to int64 (found by tests/fuzz/calibration_db_fuzz.cpp).
constexpr double kMaxCount = 9007199254740992.0;  // 2^53

std::int64_t count_or_zero(const AttributeSet& set, const std::string& key, const std::string& path) {
  const double v = number_or_zero(set, key);
  if (!(v >= 0 && v <= kMaxCount && v == std::floor(v)))
    throw InputError({path, 0}, "provenance " + key, std::to_string(v), "a count in [0, 2^53]");
  return static_cast<std::int64_t>(v);
}

Provenance read_provenance(const H5::H5File& file, const std::string& path) {
  const H5::Group group = file.openGroup("/provenance");
  const AttributeSet a = read_attributes(group);
  Provenance p;
  p.gpu_name = string_or_empty(a, "gpu_name");
  p.gpu_count = count_or_zero(a, "gpu_count", path);
  p.sm_count = count_or_zero(a, "sm_count", path);
  p.sm_clock_hz = number_or_zero(a, "sm_clock_hz");
  p.mem_clock_hz = number_or_zero(a, "mem_clock_hz");
  p.driver_version = string_or_empty(a, "driver_version");
  p.cuda_version = string_or_empty(a, "cuda_version");
  p.cublas_version = string_or_empty(a, "cublas_version");
  p.nccl_version = string_or_empty(a, "nccl_version");
  p.libfabric_version = string_or_empty(a, "libfabric_version");
  p.provider = string_or_empty(a, "provider");
  p.host = string_or_empty(a, "host");
  p.time_utc = string_or_empty(a, "time_utc");
  p.git_revision = string_or_empty(a, "git_revision");
  p.tool = string_or_empty(a, "tool");
  return p;
}

void write_experiment(H5::Group& parent, const Experiment& e) {
  H5::Group group = parent.createGroup(e.name);
  put_string(group, "kind", e.kind);
  put_string(group, "unit", e.unit);
  const SummaryStats s = e.stats();
  put_int(group, "count", s.count);
  put_double(group, "min", s.min);
  put_double(group, "max", s.max);
  put_double(group, "mean", s.mean);
  put_double(group, "median", s.median);
  put_double(group, "p10", s.p10);
  put_double(group, "p90", s.p90);
  for (const auto& [key, value] : e.params) put_double(group, kParamPrefix + key, value);
  for (const auto& [key, value] : e.labels) put_string(group, kLabelPrefix + key, value);
  const hsize_t dims[1] = {static_cast<hsize_t>(e.samples.size())};
  H5::DataSpace space(1, dims);
  H5::DataSet data = group.createDataSet("samples", H5::PredType::NATIVE_DOUBLE, space);
  if (!e.samples.empty()) data.write(e.samples.data(), H5::PredType::NATIVE_DOUBLE);
}

Experiment read_experiment(const H5::Group& parent, const std::string& name) {
  const H5::Group group = parent.openGroup(name);
  const AttributeSet a = read_attributes(group);
  Experiment e;
  e.name = name;
  e.kind = string_or_empty(a, "kind");
  e.unit = string_or_empty(a, "unit");
  const std::string param_prefix = kParamPrefix;
  const std::string label_prefix = kLabelPrefix;
  for (const auto& [key, value] : a.numbers) {
    if (key.rfind(param_prefix, 0) == 0) e.params[key.substr(param_prefix.size())] = value;
  }
  for (const auto& [key, value] : a.strings) {
    if (key.rfind(label_prefix, 0) == 0) e.labels[key.substr(label_prefix.size())] = value;
  }
  const H5::DataSet data = group.openDataSet("samples");
  const H5::DataSpace space = data.getSpace();
  hsize_t dims[1] = {0};
  space.getSimpleExtentDims(dims);
  e.samples.resize(static_cast<std::size_t>(dims[0]));
  if (!e.samples.empty()) data.read(e.samples.data(), H5::PredType::NATIVE_DOUBLE);
  return e;
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::logic_error("percentile of an empty sample set");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(position);
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

SummaryStats summarize(const std::vector<double>& samples) {
  SummaryStats s;
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.count = static_cast<std::int64_t>(sorted.size());
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0;
  for (const double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(sorted.size());
  s.median = percentile_sorted(sorted, 0.5);
  s.p10 = percentile_sorted(sorted, 0.1);
  s.p90 = percentile_sorted(sorted, 0.9);
  return s;
}

double Experiment::param(const std::string& key) const {
  const auto it = params.find(key);
  if (it == params.end()) throw std::out_of_range("experiment " + name + " has no parameter " + key);
  return it->second;
}

void CalibrationDb::put(Experiment experiment) {
  if (experiment.name.empty() || experiment.name.find('/') != std::string::npos || experiment.name == "." ||
      experiment.name == "..") {
    throw std::invalid_argument("bad experiment name '" + experiment.name + "': expected no '/'");
  }
  std::string name = experiment.name;
  experiments[name] = std::move(experiment);
}

bool same_measurement(const Experiment& a, const Experiment& b) {
  auto pa = a.params, pb = b.params;
  pa.erase("algo_index");
  pb.erase("algo_index");
  return a.kind == b.kind && a.unit == b.unit && pa == pb;
}

void pool_repeated_run(CalibrationDb& db, const CalibrationDb& repeat, const std::string& path) {
  // Every experiment is checked before any is pooled: an error leaves `db` as it was.
  for (const auto& [name, e] : repeat.experiments) {
    const auto it = db.experiments.find(name);
    if (it != db.experiments.end() && !same_measurement(it->second, e)) {
      throw InputError({path, 0}, "experiment " + name, e.kind + " in " + e.unit,
                       "a repeat of the pooled one (" + it->second.kind + " in " + it->second.unit +
                           ", the same numeric parameters except algo_index)");
    }
  }
  for (const auto& [name, e] : repeat.experiments) {
    const auto it = db.experiments.find(name);
    if (it == db.experiments.end())
      db.put(e);
    else
      it->second.samples.insert(it->second.samples.end(), e.samples.begin(), e.samples.end());
  }
}

std::vector<const Experiment*> CalibrationDb::of_kind(const std::string& kind) const {
  std::vector<const Experiment*> out;
  for (const auto& [name, e] : experiments) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

namespace {

// HDF5 strings (values and attribute names) end at the first NUL byte: a string holding one would come
// back cut, so it is refused before anything is written (found by tests/fuzz/calibration_db_fuzz.cpp).
void require_no_nul(const std::string& s, const std::string& path, const std::string& what) {
  if (s.find('\0') != std::string::npos)
    throw InputError({path, 0}, what, "a string with a NUL byte",
                     "text without NUL (HDF5 strings end at NUL)");
}

void require_storable(const CalibrationDb& db, const std::string& path) {
  const Provenance& p = db.provenance;
  for (const auto& [key, count] :
       {std::pair<const char*, std::int64_t>{"gpu_count", p.gpu_count}, {"sm_count", p.sm_count}}) {
    if (count < 0 || count > (std::int64_t{1} << 53))
      throw InputError({path, 0}, std::string("provenance ") + key, std::to_string(count),
                       "a count in [0, 2^53]");
  }
  for (const std::string* s :
       {&p.gpu_name, &p.driver_version, &p.cuda_version, &p.cublas_version, &p.nccl_version,
        &p.libfabric_version, &p.provider, &p.host, &p.time_utc, &p.git_revision, &p.tool})
    require_no_nul(*s, path, "provenance");
  for (const auto& [name, e] : db.experiments) {
    const std::string where = "experiment " + name;
    require_no_nul(name, path, where);
    require_no_nul(e.kind, path, where + " kind");
    require_no_nul(e.unit, path, where + " unit");
    for (const auto& [key, value] : e.params) require_no_nul(key, path, where + " param");
    for (const auto& [key, value] : e.labels) {
      require_no_nul(key, path, where + " label");
      require_no_nul(value, path, where + " label " + key);
    }
  }
}

}  // namespace

void write_calibration_db(const CalibrationDb& db, const std::string& path) {
  namespace fs = std::filesystem;
  require_storable(db, path);
  H5::Exception::dontPrint();
  // The pid keeps two writers of one path from sharing a temporary file.
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  try {
    H5::H5File file(tmp, H5F_ACC_TRUNC);
    H5::Group root = file.openGroup("/");
    put_string(root, "format", kFormat);
    put_int(root, "schema_version", kCalibrationDbSchemaVersion);
    write_provenance(file, db.provenance);
    H5::Group experiments = file.createGroup("/experiments");
    for (const auto& [name, e] : db.experiments) write_experiment(experiments, e);
    file.close();
  } catch (const H5::Exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw InputError({path, 0}, "cannot write HDF5 database: " + e.getDetailMsg());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError({path, 0}, "cannot rename temporary file into place");
  }
}

CalibrationDb read_calibration_db(const std::string& path) {
  H5::Exception::dontPrint();
  if (!std::filesystem::exists(path)) throw InputError({path, 0}, "file not found");
  CalibrationDb db;
  try {
    if (!H5::H5File::isHdf5(path)) throw InputError({path, 0}, "not an HDF5 file");
    const H5::H5File file(path, H5F_ACC_RDONLY);
    const AttributeSet root = read_attributes(file.openGroup("/"));
    if (string_or_empty(root, "format") != kFormat) {
      throw InputError({path, 0}, "format", string_or_empty(root, "format"),
                       std::string("\"") + kFormat + "\"");
    }
    const double version = number_or_zero(root, "schema_version");
    if (version != kCalibrationDbSchemaVersion) {
      throw InputError({path, 0}, "schema_version", std::to_string(static_cast<long long>(version)),
                       std::to_string(kCalibrationDbSchemaVersion));
    }
    db.provenance = read_provenance(file, path);
    const H5::Group experiments = file.openGroup("/experiments");
    const hsize_t n = experiments.getNumObjs();
    for (hsize_t i = 0; i < n; ++i) {
      const std::string name = experiments.getObjnameByIdx(i);
      db.experiments[name] = read_experiment(experiments, name);
    }
  } catch (const H5::Exception& e) {
    throw InputError({path, 0}, "cannot read HDF5 database: " + e.getDetailMsg());
  }
  return db;
}

CalibrationDb read_or_create_calibration_db(const std::string& path) {
  if (std::filesystem::exists(path)) return read_calibration_db(path);
  return CalibrationDb{};
}

}  // namespace moetwin
