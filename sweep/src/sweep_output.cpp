#include "moetwin/sweep/sweep_output.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/safe_file.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin {
namespace {

double parse_real(const std::string& text) {
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error("sweep: real cell '" + text + "' does not parse");
  }
  return v;
}

std::int64_t parse_integer(const std::string& text) {
  if (text.empty()) return -1;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error("sweep: integer cell '" + text + "' does not parse");
  }
  return v;
}

// An HDF5 identifier closed by `close` when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error(std::string("HDF5: cannot create ") + what);
  }
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const char* what) {
  if (status < 0) throw std::runtime_error(std::string("HDF5: ") + what);
}

// Object creation properties without modification times: HDF5 stamps datasets (and groups, when
// asked) with the wall-clock time by default, which would make every run's file different.
Handle untimed(hid_t property_class) {
  Handle plist(H5Pcreate(property_class), H5Pclose, "property list");
  check(H5Pset_obj_track_times(plist.get(), false), "set_obj_track_times");
  return plist;
}

void put_string_attribute(hid_t object, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)), "set_size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "set_strpad");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  Handle attribute(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   name);
  std::string padded = value;
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  check(H5Awrite(attribute.get(), type.get(), padded.data()), "write attribute");
}

void put_int_attribute(hid_t object, const char* name, std::int64_t value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  Handle attribute(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   name);
  check(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), "write attribute");
}

void write_column(hid_t group, const SweepColumn& column, std::size_t index,
                  const std::map<std::size_t, PointRow>& rows) {
  const hsize_t n = rows.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "dataspace");
  Handle dcpl = untimed(H5P_DATASET_CREATE);
  const auto create = [&](hid_t file_type) {
    return H5Dcreate2(group, column.name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(),
                      H5P_DEFAULT);
  };
  hid_t dataset_id = -1;
  switch (column.type) {
    case ColumnType::integer: {
      std::vector<std::int64_t> v;
      for (const auto& [id, row] : rows) v.push_back(parse_integer(row.cells[index]));
      dataset_id = create(H5T_STD_I64LE);
      Handle d(dataset_id, H5Dclose, column.name.c_str());
      check(H5Dwrite(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write");
      put_string_attribute(d.get(), "unit", column.unit);
      put_string_attribute(d.get(), "meaning", column.meaning);
      return;
    }
    case ColumnType::real: {
      std::vector<double> v;
      for (const auto& [id, row] : rows) v.push_back(parse_real(row.cells[index]));
      dataset_id = create(H5T_IEEE_F64LE);
      Handle d(dataset_id, H5Dclose, column.name.c_str());
      check(H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write");
      put_string_attribute(d.get(), "unit", column.unit);
      put_string_attribute(d.get(), "meaning", column.meaning);
      return;
    }
    case ColumnType::boolean: {
      std::vector<std::int8_t> v;
      for (const auto& [id, row] : rows) {
        const std::string& c = row.cells[index];
        v.push_back(static_cast<std::int8_t>(c == "true" ? 1 : c == "false" ? 0 : -1));
      }
      dataset_id = create(H5T_STD_I8LE);
      Handle d(dataset_id, H5Dclose, column.name.c_str());
      check(H5Dwrite(d.get(), H5T_NATIVE_INT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write");
      put_string_attribute(d.get(), "unit", column.unit);
      put_string_attribute(d.get(), "meaning", column.meaning);
      return;
    }
    case ColumnType::text: {
      std::size_t width = 1;
      for (const auto& [id, row] : rows) width = std::max(width, row.cells[index].size());
      std::vector<char> v(static_cast<std::size_t>(n) * width, '\0');
      std::size_t k = 0;
      for (const auto& [id, row] : rows) {
        std::memcpy(v.data() + k * width, row.cells[index].data(), row.cells[index].size());
        ++k;
      }
      Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
      check(H5Tset_size(type.get(), width), "set_size");
      check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "set_strpad");
      dataset_id = create(type.get());
      Handle d(dataset_id, H5Dclose, column.name.c_str());
      check(H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write");
      put_string_attribute(d.get(), "unit", column.unit);
      put_string_attribute(d.get(), "meaning", column.meaning);
      return;
    }
  }
}

void write_file(const std::string& path, const SweepProvenance& p,
                const std::map<std::size_t, PointRow>& rows) {
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "file");
  put_string_attribute(file.get(), "format", "moetwin-sweep");
  put_int_attribute(file.get(), "schema_version", kSweepOutputSchemaVersion);

  Handle gcpl = untimed(H5P_GROUP_CREATE);
  {
    Handle g(H5Gcreate2(file.get(), "provenance", H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, "group");
    put_string_attribute(g.get(), "moetwin_version", kVersion);
    put_string_attribute(g.get(), "git_revision", kGitRevision);
    put_int_attribute(g.get(), "output_schema_version", kSweepOutputSchemaVersion);
    put_string_attribute(g.get(), "command", "sweep");
    put_string_attribute(g.get(), "sweep_file", p.sweep_file);
    put_string_attribute(g.get(), "sweep_hash", p.sweep_hash);
    put_string_attribute(g.get(), "sweep_hash_algorithm",
                         "fnv1a-64 of the sweep file's bytes + the base file's");
    put_string_attribute(g.get(), "sweep_name", p.sweep_name);
    put_string_attribute(g.get(), "base_file", p.base_file);
    put_string_attribute(g.get(), "profile_path", p.profile_path);
    put_string_attribute(g.get(), "profile_hash", p.profile_hash);
    put_int_attribute(g.get(), "seed", static_cast<std::int64_t>(p.seed));
    put_string_attribute(g.get(), "catalog_dir", p.catalog_dir);
    put_string_attribute(g.get(), "catalog_hash", p.catalog_hash);
    put_int_attribute(g.get(), "points", static_cast<std::int64_t>(p.points));
  }
  Handle g(H5Gcreate2(file.get(), "points", H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, "group");
  std::string names;
  for (const SweepColumn& c : sweep_columns()) names += (names.empty() ? "" : ",") + c.name;
  put_string_attribute(g.get(), "columns", names);
  for (std::size_t i = 0; i < sweep_columns().size(); ++i) write_column(g.get(), sweep_columns()[i], i, rows);
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush");
}

}  // namespace

std::string render_sweep_csv(const std::map<std::size_t, PointRow>& rows) {
  const std::vector<SweepColumn>& columns = sweep_columns();
  std::ostringstream out;
  std::vector<std::string> fields;
  for (const SweepColumn& c : columns) fields.push_back(c.name);
  write_csv_line(out, fields);
  for (const auto& [id, row] : rows) {
    fields.clear();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& cell = row.cells.at(i);
      if (columns[i].type == ColumnType::real && !cell.empty()) {
        fields.push_back(format_fixed(parse_real(cell), columns[i].digits));
      } else {
        fields.push_back(cell);
      }
    }
    write_csv_line(out, fields);
  }
  return out.str();
}

void write_sweep_hdf5(const std::string& path, const SweepProvenance& provenance,
                      const std::map<std::size_t, PointRow>& rows) {
  namespace fs = std::filesystem;
  // A fresh temporary file beside the target, created exclusively (common/safe_file.hpp): two writers of
  // one path (two ranks by mistake) never share it, and a link planted at a guessable name is never
  // written through. Removed by its destructor on a failure.
  StagedFile staged(path);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions here, not stderr noise
  try {
    write_file(staged.path(), provenance, rows);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw InputError({path, 0}, std::string("cannot write the HDF5 file: ") + e.what());
  }
  staged.commit();
}

}  // namespace moetwin
