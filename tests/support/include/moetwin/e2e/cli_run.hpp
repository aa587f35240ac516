// End-to-end test support: run a moetwin program the way a user does (a shell command line), with stdout and
// stderr captured in files, so stderr is no terminal (no progress bars) and both streams can be checked.
// One copy for every e2e test instead of one runner per test file. Header-only: it needs
// MOETWIN_SOURCE_DIR and MOETWIN_BINARY_DIR, which moetwin_add_test defines for every test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#ifndef MOETWIN_SOURCE_DIR
#error "cli_run.hpp needs MOETWIN_SOURCE_DIR (moetwin_add_test defines it)"
#endif
#ifndef MOETWIN_BINARY_DIR
#error "cli_run.hpp needs MOETWIN_BINARY_DIR (moetwin_add_test defines it)"
#endif

namespace moetwin::e2e {

// The repository root and the build folder of this test.
inline const std::string kSourceDir = MOETWIN_SOURCE_DIR;
inline const std::string kBinaryDir = MOETWIN_BINARY_DIR;
// The moetwin binary of this build, and the catalog flag that keeps a test on the repository's catalog.
inline const std::string kMoetwin = kBinaryDir + "/cli/moetwin";
inline const std::string kCatalogFlag = "--catalog " + kSourceDir + "/catalog/data";

// What a command did: its exit code (-1 when it did not exit), the signal that ended it (0 when none) and
// what it wrote to stdout and stderr.
struct CliRun {
  int code = -1;
  int signal = 0;
  std::string out;
  std::string err;
};

inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh, empty folder for the running test's files: BUILD/e2e/<file tag>/<suite>.<test>. One folder per
// test, because ctest runs a file's tests as separate processes in parallel.
inline std::filesystem::path fresh_test_dir(const std::string& file_tag) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string leaf = test ? std::string(test->test_suite_name()) + "." + test->name() : "no-test";
  const std::filesystem::path dir = std::filesystem::path(kBinaryDir) / "e2e" / file_tag / leaf;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A fixture for e2e tests whose cases write files: dir_ is the running test's fresh folder (fresh_test_dir),
// removed after the test.
class FreshDirTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fresh_test_dir("fixture"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// Runs the shell command line `command` with stdout to `out` and stderr to `err`; returns its exit code
// (-1 when it did not exit).
inline int run_command_to(const std::string& command, const std::filesystem::path& out,
                          const std::filesystem::path& err) {
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `moetwin --catalog <repository catalog> ARGS` with stdout to `out` and stderr to `err`: its exit code.
inline int run_moetwin_to(const std::string& args, const std::filesystem::path& out,
                          const std::filesystem::path& err) {
  return run_command_to(kMoetwin + " " + kCatalogFlag + " " + args, out, err);
}

// Runs the shell command line `command`, stdout to DIR/stdout.txt and stderr to DIR/stderr.txt.
inline CliRun run_command(const std::string& command, const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "stdout.txt";
  const std::filesystem::path err = dir / "stderr.txt";
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  CliRun r;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_whole_file(out);
  r.err = read_whole_file(err);
  return r;
}

// `moetwin --catalog <repository catalog> ARGS`, its output captured under `dir`.
inline CliRun run_moetwin(const std::string& args, const std::filesystem::path& dir) {
  return run_command(kMoetwin + " " + kCatalogFlag + " " + args, dir);
}

// `moetwin ARGS` as given (the catalog found as a user's run finds it), its output captured under `dir`.
inline CliRun run_moetwin_as_given(const std::string& args, const std::filesystem::path& dir) {
  return run_command(kMoetwin + " " + args, dir);
}

}  // namespace moetwin::e2e
