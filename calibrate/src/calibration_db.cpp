// HDF5 reading and writing of the calibration database (layout in calibration_db.hpp).
#include "moetwin/calibrate/calibration_db.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>

#include "calibration_db_image.hpp"
#include "moetwin/calibrate/db_file_stamp.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/safe_file.hpp"

namespace moetwin {

namespace {

constexpr const char* kFormat = "moetwin-calibration";
constexpr const char* kParamPrefix = "param:";
constexpr const char* kLabelPrefix = "label:";
// The first 8 bytes of an HDF5 superblock (HDF5 File Format Specification, "Format Signature").
constexpr std::string_view kHdf5Signature{"\x89HDF\r\n\x1a\n", 8};
constexpr const char* kImageName = "/proc/self/moetwin-calibration-db-image";

// What every count read from a file is checked against: nothing in a database outnumbers its bytes.
struct ReadBounds {
  std::string path;          // for errors
  std::uint64_t file_bytes;  // size of the HDF5 image
};

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

// All attributes of an object, read as strings or doubles (integers are widened to double). Only single
// values are read: an attribute of several elements would not fit the one value it is read into.
struct AttributeSet {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
};

// H5Aiterate2 callback: collects attribute names (no exception may cross libhdf5's C frames).
herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* names) noexcept {
  try {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

// H5Literate callback: collects link names.
herr_t collect_link_name(hid_t, const char* name, const H5L_info_t*, void* names) noexcept {
  try {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

AttributeSet read_attributes(const H5::H5Object& object, const ReadBounds& bounds, const std::string& where) {
  AttributeSet out;
  const int n = object.getNumAttrs();
  if (n < 0 || static_cast<std::uint64_t>(n) > bounds.file_bytes)
    throw InputError({bounds.path, 0}, where + " attribute count", std::to_string(n),
                     "at most one per byte of the file");
  // Names first, in one pass, then each attribute by name: opening by index makes libhdf5 decode and
  // sort all of an object's attributes for every one opened (quadratic; a 1.6 MB database took seconds
  // under the sanitizers of the fuzz build).
  std::vector<std::string> names;
  hsize_t position = 0;
  if (H5Aiterate2(object.getId(), H5_INDEX_NAME, H5_ITER_NATIVE, &position, collect_attribute_name, &names) <
      0)
    throw InputError({bounds.path, 0}, where + ": cannot list its attributes (libhdf5 H5Aiterate2 failed)");
  for (const std::string& name : names) {
    H5::Attribute attribute = object.openAttribute(name);
    if (attribute.getSpace().getSimpleExtentNpoints() != 1)
      throw InputError({bounds.path, 0}, where + " attribute " + name,
                       std::to_string(attribute.getSpace().getSimpleExtentNpoints()) + " values",
                       "one value");
    const H5T_class_t cls = attribute.getTypeClass();
    if (cls == H5T_STRING) {
      const H5::StrType type = attribute.getStrType();
      if (!type.isVariableStr() && type.getSize() > bounds.file_bytes)
        throw InputError({bounds.path, 0}, where + " attribute " + name,
                         std::to_string(type.getSize()) + " bytes", "a string no longer than the file");
      std::string value;
      attribute.read(type, value);
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

Provenance read_provenance(const H5::H5File& file, const ReadBounds& bounds) {
  const std::string& path = bounds.path;
  const H5::Group group = file.openGroup("/provenance");
  const AttributeSet a = read_attributes(group, bounds, "provenance");
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

Experiment read_experiment(const H5::Group& parent, const std::string& name, const ReadBounds& bounds) {
  const std::string where = "experiment " + name;
  if (parent.childObjType(name) != H5O_TYPE_GROUP)
    throw InputError({bounds.path, 0}, where, "not a group", "a group per experiment");
  const H5::Group group = parent.openGroup(name);
  const AttributeSet a = read_attributes(group, bounds, where);
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
  if (group.childObjType("samples") != H5O_TYPE_DATASET)
    throw InputError({bounds.path, 0}, where + " samples", "not a dataset", "a dataset of doubles");
  const H5::DataSet data = group.openDataSet("samples");
  const H5::DataSpace space = data.getSpace();
  if (space.getSimpleExtentNdims() != 1 || data.getTypeClass() != H5T_FLOAT)
    throw InputError({bounds.path, 0}, where + " samples", "another shape or type",
                     "a 1-D dataset of doubles");
  hsize_t dims[1] = {0};
  space.getSimpleExtentDims(dims);
  // The writer stores samples contiguously, 8 bytes each: a count the stored bytes cannot hold is damage
  // (or another writer), and would otherwise size the allocation below.
  if (dims[0] > bounds.file_bytes / sizeof(double) || data.getStorageSize() != dims[0] * sizeof(double))
    throw InputError(
        {bounds.path, 0}, where + " samples",
        std::to_string(dims[0]) + " samples in " + std::to_string(data.getStorageSize()) + " bytes",
        "8 stored bytes per sample, within the file");
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

// Fills the user block of the closed HDF5 file `tmp` with the stamp of its bytes after the user block.
void stamp_written_file(const std::string& tmp) {
  std::string bytes;
  {
    std::ifstream in(tmp, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw std::runtime_error("cannot read back the file just written");
  }
  if (bytes.size() < kDbStampBytes ||
      bytes.compare(kDbStampBytes, kHdf5Signature.size(), kHdf5Signature) != 0)
    throw std::runtime_error("the HDF5 superblock is not right after the 512-byte user block");
  const std::string stamp =
      make_db_stamp(std::string_view(bytes).substr(kDbStampBytes), kCalibrationDbSchemaVersion);
  std::fstream out(tmp, std::ios::binary | std::ios::in | std::ios::out);
  out.write(stamp.data(), static_cast<std::streamsize>(stamp.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write the stamp");
}

}  // namespace

void write_calibration_db(const CalibrationDb& db, const std::string& path) {
  require_storable(db, path);
  H5::Exception::dontPrint();
  // A fresh temporary file beside the target, created exclusively (common/safe_file.hpp): two writers
  // of one path never share it, and a link planted at a guessable name is never written through.
  StagedFile staged(path);
  const std::string& tmp = staged.path();
  try {
    // The stamp's room: the HDF5 user block (db_file_stamp.hpp).
    H5::FileCreatPropList create;
    create.setUserblock(kDbStampBytes);
    // The 1.8 file format: superblock v2 and object headers v2 carry checksums that libhdf5 verifies on
    // every read (the 1.6 format it writes by default has none). Readable by HDF5 1.8 and later.
    H5::FileAccPropList access;
    access.setLibverBounds(H5F_LIBVER_V18, H5F_LIBVER_V18);
    {
      // libhdf5 writes the file out when its last object closes, not at file.close(): every object lives
      // in this block, so the file is complete before it is stamped. H5F_ACC_TRUNC on the file just
      // created empties it; it is ours alone.
      H5::H5File file(tmp, H5F_ACC_TRUNC, create, access);
      H5::Group root = file.openGroup("/");
      put_string(root, "format", kFormat);
      put_int(root, "schema_version", kCalibrationDbSchemaVersion);
      write_provenance(file, db.provenance);
      H5::Group experiments = file.createGroup("/experiments");
      for (const auto& [name, e] : db.experiments) write_experiment(experiments, e);
    }
    stamp_written_file(tmp);
  } catch (const H5::Exception& e) {
    throw InputError({path, 0}, "cannot write HDF5 database: " + e.getDetailMsg());
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
    throw InputError({path, 0}, std::string("cannot write HDF5 database: ") + e.what());
  }
  staged.commit();  // the temporary file is removed by its destructor on every failure above
}

std::string read_database_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw InputError({path, 0}, "file not found");
  if (ec) throw InputError({path, 0}, "cannot access: " + ec.message());
  if (status.type() == fs::file_type::directory)
    throw InputError({path, 0}, "is a directory, expected a calibration database file (.h5)");
  if (status.type() != fs::file_type::regular)
    throw InputError({path, 0}, "not a regular file, expected a calibration database file (.h5)");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InputError({path, 0}, "cannot read its size: " + ec.message());
  if (size > kMaxCalibrationDbBytes)
    throw InputError({path, 0}, "size", std::to_string(size) + " bytes",
                     "at most " + std::to_string(kMaxCalibrationDbBytes) + " (kMaxCalibrationDbBytes)");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size)) || in.peek() != EOF)
    throw InputError({path, 0}, "cannot read the file (unreadable, or it changed size while read)");
  return bytes;
}

CalibrationDb parse_calibration_db_image(std::string_view file, const std::string& path) {
  H5::Exception::dontPrint();
  const ReadBounds bounds{path, file.size()};
  CalibrationDb db;
  try {
    // libhdf5 reads the bytes in memory (the core driver over a copy of `file`): exactly the bytes the
    // caller checked, not the file on disk, which may have changed since.
    H5::FileAccPropList access;
    access.setCore(64 * 1024, false);
    if (H5Pset_file_image(access.getId(), const_cast<char*>(file.data()), file.size()) < 0)
      throw InputError({path, 0}, "cannot hand the file to libhdf5 (H5Pset_file_image failed)");
    // The core driver refuses an image under the name of a file that exists; nothing can be created in
    // /proc/self (Linux), so this name never does.
    const H5::H5File h5(kImageName, H5F_ACC_RDONLY, H5::FileCreatPropList::DEFAULT, access);
    const AttributeSet root = read_attributes(h5.openGroup("/"), bounds, "root");
    if (string_or_empty(root, "format") != kFormat) {
      throw InputError({path, 0}, "format", string_or_empty(root, "format"),
                       std::string("\"") + kFormat + "\"");
    }
    const double version = number_or_zero(root, "schema_version");
    if (version != kCalibrationDbSchemaVersion) {
      throw InputError({path, 0}, "schema_version", std::to_string(static_cast<long long>(version)),
                       std::to_string(kCalibrationDbSchemaVersion));
    }
    db.provenance = read_provenance(h5, bounds);
    const H5::Group experiments = h5.openGroup("/experiments");
    const hsize_t n = experiments.getNumObjs();
    if (n > bounds.file_bytes)
      throw InputError({path, 0}, "experiment count", std::to_string(n), "at most one per byte of the file");
    // Names in one pass, as for attributes: getObjnameByIdx builds and sorts the group's whole link table
    // for every name (a 1.6 MB database holds 418 experiments).
    std::vector<std::string> names;
    hsize_t position = 0;
    if (H5Literate(experiments.getId(), H5_INDEX_NAME, H5_ITER_NATIVE, &position, collect_link_name, &names) <
        0)
      throw InputError({path, 0}, "/experiments: cannot list its experiments (libhdf5 H5Literate failed)");
    for (const std::string& name : names) {
      if (name.empty() || name == "." || name == ".." || name.find('\0') != std::string::npos)
        throw InputError({path, 0}, "experiment name", name, "a name without '/' or NUL");
      db.experiments[name] = read_experiment(experiments, name, bounds);
    }
  } catch (const H5::Exception& e) {
    throw InputError({path, 0}, "cannot read HDF5 database: " + e.getDetailMsg());
  }
  return db;
}

CalibrationDb read_calibration_db_bytes(std::string_view file, const std::string& path) {
  if (!has_db_stamp(file)) {
    if (file.substr(0, kHdf5Signature.size()) == kHdf5Signature)
      throw InputError(
          {path, 0}, "database stamp",
          "missing (an HDF5 file written before moetwin-calibrate stamped "
          "its databases, or by another tool)",
          "a stamped database: check and stamp it once with `moetwin-calibrate stamp " + path + "`");
    throw InputError({path, 0},
                     "not a calibration database: neither the stamp moetwin-calibrate writes nor "
                     "HDF5's signature at its start");
  }
  const std::string_view hdf5 = verify_db_stamp(file, path);
  if (hdf5.substr(0, kHdf5Signature.size()) != kHdf5Signature)
    throw InputError({path, 0}, "no HDF5 superblock after the 512-byte stamp");
  // libhdf5 only in a child: a stamp anyone can recompute proves the bytes unchanged, not harmless.
  return parse_calibration_db_image_isolated(file, path);
}

CalibrationDb read_calibration_db(const std::string& path) {
  return read_calibration_db_bytes(read_database_bytes(path), path);
}

CalibrationDb read_or_create_calibration_db(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::status(path, ec).type() == std::filesystem::file_type::not_found)
    return CalibrationDb{};
  return read_calibration_db(path);
}

}  // namespace moetwin
