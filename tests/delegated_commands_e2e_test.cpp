// End-to-end: `net` and `sweep` run in their own executables (cli/src/delegated_commands.hpp) so that
// `moetwin` links none of SimGrid/ns-3, Open MPI or HDF5. Checked here: what `moetwin` loads (ldd), that the
// commands still answer under `moetwin` (help, a run), and a clear error, not a crash, when the sibling
// executable is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = MOETWIN_SOURCE_DIR;
const std::string kBinary = std::string(MOETWIN_BINARY_DIR) + "/cli/moetwin";

struct CommandRun {
  int code = -1;
  std::string out;  // stdout and stderr together
};

CommandRun run(const std::string& cmd) {
  CommandRun r;
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(DelegatedCommands, MoetwinLoadsNoneOfSimgridMpiHdf5) {
  const CommandRun ldd = run("ldd " + kBinary);
  ASSERT_EQ(ldd.code, 0) << ldd.out;
  for (const char* lib : {"libsimgrid", "libns3", "libmpi", "libhdf5", "libcurl", "libfabric"}) {
    EXPECT_EQ(ldd.out.find(lib), std::string::npos) << "moetwin loads " << lib << ":\n" << ldd.out;
  }
  // The siblings do link what they exist for.
  EXPECT_NE(run("ldd " + std::string(MOETWIN_BINARY_DIR) + "/cli/moetwin-net").out.find("libsimgrid"),
            std::string::npos);
  EXPECT_NE(run("ldd " + std::string(MOETWIN_BINARY_DIR) + "/cli/moetwin-sweep").out.find("libhdf5"),
            std::string::npos);
}

TEST(DelegatedCommands, HelpListsThemAndTheirHelpIsTheirs) {
  const CommandRun help = run(kBinary + " --help");
  ASSERT_EQ(help.code, 0) << help.out;
  EXPECT_NE(help.out.find("  net "), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("  sweep "), std::string::npos) << help.out;
  const CommandRun sweep = run(kBinary + " sweep --help");
  ASSERT_EQ(sweep.code, 0) << sweep.out;
  EXPECT_NE(sweep.out.find("Usage: moetwin sweep"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("--keep-journal"), std::string::npos) << sweep.out;
  // --catalog DIR before the command: DIR is not taken for the command's name.
  const CommandRun net = run(kBinary + " --catalog " + kSource + "/catalog/data net --help");
  ASSERT_EQ(net.code, 0) << net.out;
  EXPECT_NE(net.out.find("Usage: moetwin net"), std::string::npos) << net.out;
}

TEST(DelegatedCommands, NetRunsThroughMoetwinWithBothBackends) {
  for (const char* backend : {"analytical", "simgrid"}) {
    const CommandRun r =
        run(kBinary + " --catalog " + kSource + "/catalog/data net " + kSource +
            "/scenarios/default.toml --collective all-to-all --group ep --bytes 16MiB --backend " + backend +
            " --format json");
    ASSERT_EQ(r.code, 0) << backend << ": " << r.out;
    EXPECT_NE(r.out.find(std::string("\"backend\": \"") + backend + "\""), std::string::npos) << r.out;
  }
}

TEST(DelegatedCommands, BadInputInTheSiblingIsExit2) {
  const CommandRun r = run(kBinary + " net /nonexistent/x.toml");
  EXPECT_EQ(r.code, 2) << r.out;
  // An input error the sibling reports (sweep --out PREFIX whose PREFIX.csv is the input): its message
  // alone, nothing of moetwin's printed ahead of it.
  const fs::path dir = fs::temp_directory_path() / ("moetwin-delegated-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.csv") << "not a sweep\n";
  const CommandRun s = run(kBinary + " sweep " + (dir / "s.csv").string() + " --out " + (dir / "s").string());
  fs::remove_all(dir);
  EXPECT_EQ(s.code, 2) << s.out;
  EXPECT_EQ(s.out.rfind("error: ", 0), 0u) << s.out;
  EXPECT_EQ(s.out.find("error: error:"), std::string::npos) << s.out;
}

TEST(DelegatedCommands, MissingSiblingIsAClearErrorNotACrash) {
  const fs::path dir = fs::temp_directory_path() / ("moetwin-alone-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kBinary, dir / "moetwin", fs::copy_options::overwrite_existing);
  const CommandRun r = run((dir / "moetwin").string() + " sweep whatever.toml");
  fs::remove_all(dir);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("moetwin-sweep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("could not be started"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace moetwin
