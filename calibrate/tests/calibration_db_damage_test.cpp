// The calibration database reader on damaged files (issue 44): the stamp (db_file_stamp.hpp) is checked
// before libhdf5 parses a byte, so every damaged file is an InputError naming it, never a crash or a hang;
// unstamped files are refused with the command that stamps them, and `stamp` reads them in a child
// process that a crash or hang inside libhdf5 cannot take down.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/db_file_stamp.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kDamaged = std::string(MOETWIN_SOURCE_DIR) + "/calibrate/tests/data/damaged-db/";

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of the InputError `f` throws; fails the test when it throws nothing.
template <typename F>
std::string error_of(F&& f) {
  const std::string e = test_support::error_of(std::forward<F>(f));
  if (e == "no error") ADD_FAILURE() << "expected InputError";
  return e;
}

CalibrationDb small_db() {
  CalibrationDb db;
  db.provenance.gpu_name = "NVIDIA H200";
  db.provenance.gpu_count = 1;
  db.provenance.tool = "damage test";
  Experiment e;
  e.name = "gemm.square.m256";
  e.kind = "gemm";
  e.unit = "s";
  e.params = {{"m", 256}, {"n", 256}, {"k", 256}};
  e.labels = {{"dtype", "bf16"}};
  e.samples = {1e-5, 1.1e-5, 1.2e-5};
  db.put(e);
  return db;
}

TEST(DbFileStamp, Xxh64MatchesTheSpecVectors) {
  // xxHash's own test values (XXH64, seed 0); longer inputs were checked against zstd's frame checksum,
  // which is the low 32 bits of XXH64 (2026-12-04, lengths 0..65537).
  EXPECT_EQ(xxh64(""), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(xxh64("a"), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(xxh64("abc"), 0x44BC2CF5AD770999ULL);
}

TEST(DbFileStamp, WriterStampsAndReaderVerifies) {
  const fs::path dir = scratch_dir("moetwin-db-stamp");
  const std::string path = (dir / "db.h5").string();
  write_calibration_db(small_db(), path);
  const std::string bytes = bytes_of(path);
  ASSERT_GT(bytes.size(), kDbStampBytes);
  const std::string hdf5 = bytes.substr(kDbStampBytes);
  EXPECT_EQ(bytes.substr(0, kDbStampBytes), make_db_stamp(hdf5, kCalibrationDbSchemaVersion));
  EXPECT_EQ(bytes.rfind("moetwin-calibration-db stamp 1\nschema_version 1\nhdf5_bytes " +
                            std::to_string(hdf5.size()) + "\nxxh64 ",
                        0),
            0u);
  EXPECT_EQ(hdf5.compare(0, 8, std::string("\x89HDF\r\n\x1a\n", 8)), 0);  // HDF5 right after the stamp
  EXPECT_EQ(read_calibration_db(path).experiments, small_db().experiments);
  fs::remove_all(dir);
}

// Every single-byte change and every truncation of a stamped database is refused with an InputError
// naming the file, before libhdf5 parses anything (it would crash on some: issue 44).
TEST(DbFileStamp, EveryByteFlipAndTruncationIsRefused) {
  const fs::path dir = scratch_dir("moetwin-db-flip");
  const std::string path = (dir / "db.h5").string();
  write_calibration_db(small_db(), path);
  const std::string good = bytes_of(path);
  ASSERT_NO_THROW(read_calibration_db_bytes(good, "db.h5"));
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    const std::string what = error_of([&] { read_calibration_db_bytes(bad, "flip.h5"); });
    ASSERT_EQ(what.rfind("flip.h5: ", 0), 0u) << "byte " << i << ": " << what;
  }
  for (std::size_t n = 0; n < good.size(); n += 7) {
    const std::string what = error_of([&] { read_calibration_db_bytes(good.substr(0, n), "cut.h5"); });
    ASSERT_EQ(what.rfind("cut.h5: ", 0), 0u) << "length " << n << ": " << what;
  }
  const std::string longer = error_of([&] { read_calibration_db_bytes(good + "x", "long.h5"); });
  EXPECT_NE(longer.find("cut short or extended"), std::string::npos) << longer;
  fs::remove_all(dir);
}

TEST(DbFileStamp, MessagesSayWhatIsWrong) {
  const fs::path dir = scratch_dir("moetwin-db-messages");
  const std::string path = (dir / "db.h5").string();
  write_calibration_db(small_db(), path);
  std::string bytes = bytes_of(path);
  std::string data_flip = bytes;
  data_flip[bytes.size() - 1] = static_cast<char>(data_flip[bytes.size() - 1] ^ 0x40);
  const std::string checksum = error_of([&] { read_calibration_db_bytes(data_flip, "x.h5"); });
  EXPECT_NE(checksum.find("x.h5: checksum: xxh64 "), std::string::npos) << checksum;
  EXPECT_NE(checksum.find("the file is damaged"), std::string::npos) << checksum;
  std::string newer = bytes;
  newer[kDbStampMagic.size()] = '2';
  const std::string version = error_of([&] { read_calibration_db_bytes(newer, "x.h5"); });
  EXPECT_NE(version.find("x.h5: database stamp version: 2: 1"), std::string::npos) << version;
  std::string schema = bytes;
  schema[schema.find("schema_version 1") + 15] = '7';
  const std::string schema_error = error_of([&] { read_calibration_db_bytes(schema, "x.h5"); });
  EXPECT_NE(schema_error.find("x.h5: database stamp schema_version: 7: 1"), std::string::npos)
      << schema_error;
  const std::string text = error_of([&] { read_calibration_db_bytes("name,kind\n", "x.h5"); });
  EXPECT_NE(text.find("x.h5: not a calibration database"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(DbFileStamp, DirectoryMissingAndOversizedPathsAreNamed) {
  const fs::path dir = scratch_dir("moetwin-db-dir");
  const std::string as_dir = error_of([&] { read_calibration_db(dir.string()); });
  EXPECT_EQ(as_dir, dir.string() + ": is a directory, expected a calibration database file (.h5)");
  const std::string append = error_of([&] { read_or_create_calibration_db(dir.string()); });
  EXPECT_EQ(append, as_dir);  // `import --db DIR` reads before it writes
  const std::string missing = error_of([&] { read_calibration_db((dir / "none.h5").string()); });
  EXPECT_NE(missing.find("none.h5: file not found"), std::string::npos) << missing;
  EXPECT_TRUE(read_or_create_calibration_db((dir / "none.h5").string()).experiments.empty());
  fs::remove_all(dir);
}

// The four files that crashed or hung `moetwin-calibrate show` (issue 44) and their intact original are
// all unstamped: refused before libhdf5 reads them, with the command that stamps a good one.
TEST(DbFileStamp, UnstampedFilesAreRefusedWithTheStampCommand) {
  for (const char* name : {"h5show-segv-H5HG_read.h5", "h5show-segv-H5A__close.h5", "h5show-hang.h5",
                           "h5show-hang-2.h5", "legacy-unstamped-fastaccum.h5"}) {
    const std::string path = kDamaged + name;
    const auto start = std::chrono::steady_clock::now();
    const std::string what = error_of([&] { read_calibration_db(path); });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << name;
    EXPECT_EQ(what.rfind(path + ": database stamp: missing", 0), 0u) << what;
    EXPECT_NE(what.find("moetwin-calibrate stamp " + path), std::string::npos) << what;
  }
}

TEST(StampCalibrationDb, StampsAnIntactLegacyFileWithTheSameData) {
  const fs::path dir = scratch_dir("moetwin-db-legacy");
  const fs::path path = dir / "legacy.h5";
  fs::copy_file(kDamaged + "legacy-unstamped-fastaccum.h5", path);
  const std::string said = stamp_calibration_db(path.string(), 60);
  EXPECT_NE(said.find("stamped (2 experiments"), std::string::npos) << said;
  const CalibrationDb db = read_calibration_db(path.string());
  ASSERT_EQ(db.experiments.size(), 2u);
  EXPECT_EQ(db.provenance.gpu_name, "NVIDIA H200");
  EXPECT_EQ(db.experiments.at("gemm_fp8.square.m8192").samples.size(), 10u);  // h5ls of the original
  EXPECT_EQ(db.experiments.at("gemm_fp8_sustained.square.m8192").samples.size(), 3u);
  // A second stamp verifies and leaves the file alone.
  const std::string before = bytes_of(path);
  EXPECT_NE(stamp_calibration_db(path.string(), 60).find("already stamped, checksum verified"),
            std::string::npos);
  EXPECT_EQ(bytes_of(path), before);
  // Nothing is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(StampCalibrationDb, RefusesDamagedStampedFilesWithoutRestamping) {
  const fs::path dir = scratch_dir("moetwin-db-restamp");
  const std::string path = (dir / "db.h5").string();
  write_calibration_db(small_db(), path);
  std::string bytes = bytes_of(path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const std::string what = error_of([&] { stamp_calibration_db(path, 60); });
  EXPECT_NE(what.find(path + ": checksum"), std::string::npos) << what;
  EXPECT_EQ(bytes_of(path), bytes);
  fs::remove_all(dir);
}

// `stamp` on the files that crashed and hung libhdf5: the child process ends (a signal, a sanitizer's
// exit, or killed at the time limit) and the parent reports the file as damaged; the file is untouched
// and nothing is left beside it.
TEST(StampCalibrationDb, DamagedLegacyFilesEndTheChildNotTheCaller) {
  const fs::path dir = scratch_dir("moetwin-db-stamp-damaged");
  for (const char* name :
       {"h5show-segv-H5HG_read.h5", "h5show-segv-H5A__close.h5", "h5show-hang.h5", "h5show-hang-2.h5"}) {
    const fs::path path = dir / name;
    fs::copy_file(kDamaged + name, path);
    const std::string before = bytes_of(path);
    const auto start = std::chrono::steady_clock::now();
    const std::string what = error_of([&] { stamp_calibration_db(path.string(), 3); });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << name;
    EXPECT_EQ(what.rfind(path.string() + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("it was left as it is"), std::string::npos) << what;
    EXPECT_EQ(bytes_of(path), before) << name;
    fs::remove(path);
    EXPECT_TRUE(fs::is_empty(dir)) << name;
  }
  fs::remove_all(dir);
}

TEST(StampCalibrationDb, RefusesABadTimeout) {
  EXPECT_THROW(stamp_calibration_db("x.h5", 0), InputError);
  EXPECT_THROW(stamp_calibration_db("x.h5", -1), InputError);
}

}  // namespace
}  // namespace moetwin
