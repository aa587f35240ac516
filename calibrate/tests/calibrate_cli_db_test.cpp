// End to end: moetwin-calibrate on damaged databases and on directories (issue 44). `show`, `import --db`
// into an existing file and `fit` read through one reader; a damaged or unstamped file is exit 2 with a
// message naming it (before: a segfault inside libhdf5, or no answer), a directory is named as one
// (before: "H5Fis_hdf5 returned negative value"), and `stamp` turns the intact legacy file into one whose
// `show` output is the pre-stamp reader's, byte for byte.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

namespace fs = std::filesystem;

const std::string kSource = MOETWIN_SOURCE_DIR;
const std::string kBinary = std::string(MOETWIN_BINARY_DIR) + "/calibrate/moetwin-calibrate";
const std::string kDamaged = kSource + "/calibrate/tests/data/damaged-db/";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CliRun {
  int code;  // exit code; -1 when ended by a signal (or by `timeout`: 124)
  std::string out;
  std::string err;
};

class CalibrateCliDb : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin-calibrate not built";
    dir_ = fs::temp_directory_path() / ("moetwin-calibrate-cli-db-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `moetwin-calibrate ARGS`, bounded by 60 s (a hang is a failure, not a stuck test).
  CliRun calibrate(const std::string& args) {
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
    const std::string cmd = "timeout 60 " + kBinary + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  }

  fs::path dir_;
};

TEST_F(CalibrateCliDb, ShowOnTheFilesThatCrashedAndHungIsExit2NamingTheFile) {
  for (const char* name :
       {"h5show-segv-H5HG_read.h5", "h5show-segv-H5A__close.h5", "h5show-hang.h5", "h5show-hang-2.h5"}) {
    const std::string path = kDamaged + name;
    const CliRun r = calibrate("show " + path);
    EXPECT_EQ(r.code, 2) << name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: " + path + ": database stamp: missing", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("moetwin-calibrate stamp " + path), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CalibrateCliDb, ImportIntoAndFitFromADamagedDatabaseAreExit2AndWriteNothing) {
  const fs::path db = dir_ / "work" / "db.h5";
  fs::copy_file(kDamaged + "h5show-segv-H5HG_read.h5", db);
  const std::string before = read_file(db);
  const CliRun import =
      calibrate("import nccl-tests " + kSource +
                "/calibrate/tests/data/all_reduce_perf_8gpu.txt --op all_reduce --db " + db.string());
  EXPECT_EQ(import.code, 2) << import.err;
  EXPECT_NE(import.err.find(db.string() + ": database stamp: missing"), std::string::npos) << import.err;
  EXPECT_EQ(read_file(db), before);
  const CliRun fit =
      calibrate("fit --db " + db.string() + " --gpu H200-SXM --out " + (dir_ / "p.toml").string());
  EXPECT_EQ(fit.code, 2) << fit.err;
  EXPECT_NE(fit.err.find(db.string() + ": database stamp: missing"), std::string::npos) << fit.err;
  EXPECT_FALSE(fs::exists(dir_ / "p.toml"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "work"), fs::directory_iterator()), 1);
}

TEST_F(CalibrateCliDb, ADirectoryAsDatabaseIsNamedAsOne) {
  const std::string expected =
      "error: " + (dir_ / "work").string() + ": is a directory, expected a calibration database file (.h5)\n";
  const CliRun show = calibrate("show " + (dir_ / "work").string());
  EXPECT_EQ(show.code, 2);
  EXPECT_EQ(show.err, expected);
  const CliRun import = calibrate("import nccl-tests " + kSource +
                                  "/calibrate/tests/data/all_reduce_perf_8gpu.txt --op all_reduce --db " +
                                  (dir_ / "work").string());
  EXPECT_EQ(import.code, 2);
  EXPECT_NE(import.err.find(expected), std::string::npos) << import.err;
  const CliRun fit = calibrate("fit --db " + (dir_ / "work").string() + " --gpu H200-SXM --out " +
                               (dir_ / "p.toml").string());
  // fit's --db is checked by CLI11 (an existing file) before the reader sees it.
  EXPECT_EQ(fit.code, 2);
  EXPECT_EQ(fit.err.rfind("--db: File is actually a directory: " + (dir_ / "work").string(), 0), 0u)
      << fit.err;
  EXPECT_TRUE(fs::is_empty(dir_ / "work"));
}

TEST_F(CalibrateCliDb, StampRefusesADamagedLegacyFileAndKeepsTheIntactOnesData) {
  const fs::path damaged = dir_ / "work" / "damaged.h5";
  fs::copy_file(kDamaged + "h5show-segv-H5A__close.h5", damaged);
  const std::string before = read_file(damaged);
  const CliRun bad = calibrate("stamp " + damaged.string() + " --timeout 10");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(bad.err.rfind("error: " + damaged.string() + ": ", 0), 0u) << bad.err;
  EXPECT_EQ(read_file(damaged), before);
  fs::remove(damaged);

  const fs::path legacy = dir_ / "work" / "legacy.h5";
  fs::copy_file(kDamaged + "legacy-unstamped-fastaccum.h5", legacy);
  const CliRun stamp = calibrate("stamp " + legacy.string());
  ASSERT_EQ(stamp.code, 0) << stamp.err;
  const CliRun show = calibrate("show " + legacy.string());
  ASSERT_EQ(show.code, 0) << show.err;
  // What `show` printed for this file before the stamp existed (moetwin-calibrate show at commit ff25279,
  // 2026-12-04).
  EXPECT_EQ(show.out, read_file(kDamaged + "legacy-unstamped-fastaccum.show.txt"));
  // An import into the stamped file keeps it readable (the writer stamps what it writes).
  const CliRun import =
      calibrate("import nccl-tests " + kSource +
                "/calibrate/tests/data/all_reduce_perf_8gpu.txt --op all_reduce --db " + legacy.string());
  ASSERT_EQ(import.code, 0) << import.err;
  EXPECT_EQ(calibrate("show " + legacy.string()).code, 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "work"), fs::directory_iterator()), 1);
}

}  // namespace
