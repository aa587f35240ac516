// Safe writes in shared folders (issue 55 item 2): a link planted at any temporary name is never written
// through, a failure leaves nothing behind, the output keeps ordinary permissions.
#include "moetwin/common/safe_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder per test, removed at the end.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string tmpl = (fs::temp_directory_path() / "moetwin-safe-file-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // How many temporary files of `target` the folder holds.
  int count_staged(const std::string& target) const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(path))
      if (is_staged_name_for(e.path().filename().string(), target)) ++n;
    return n;
  }
};

// The reproducer of shared/data/bad-inputs/2026-12-06/symlink-tmp.sh at the library level: links at the
// old fixed names (OUT.tmp-moetwin, OUT.tmp) are left alone, and so are their victims.
TEST(SafeFile, LinksAtOldTemporaryNamesAreNotFollowed) {
  TempFolder d;
  const fs::path out = d.path / "out.json";
  std::ofstream(d.path / "victim.txt") << "victim content\n";
  fs::create_symlink("victim.txt", d.path / "out.json.tmp-moetwin");
  fs::create_symlink("victim.txt", d.path / "out.json.tmp");
  write_file_atomically(out.string(), "{\"a\": 1}\n");
  EXPECT_EQ(slurp(d.path / "victim.txt"), "victim content\n");
  EXPECT_TRUE(fs::is_symlink(d.path / "out.json.tmp-moetwin"));
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(slurp(out), "{\"a\": 1}\n");
  EXPECT_EQ(d.count_staged("out.json"), 0);
}

// A link at the target itself is replaced (rename), never written through.
TEST(SafeFile, LinkAtTheTargetIsReplacedNotFollowed) {
  TempFolder d;
  std::ofstream(d.path / "victim.txt") << "victim content\n";
  fs::create_symlink("victim.txt", d.path / "out.csv");
  write_file_atomically((d.path / "out.csv").string(), "a,b\n");
  EXPECT_EQ(slurp(d.path / "victim.txt"), "victim content\n");
  EXPECT_FALSE(fs::is_symlink(d.path / "out.csv"));
  EXPECT_EQ(slurp(d.path / "out.csv"), "a,b\n");
}

// Two staged files of one target have different names; each is removed unless committed.
TEST(SafeFile, StagedFilesAreUniqueAndCleanedUp) {
  TempFolder d;
  const std::string target = (d.path / "db.h5").string();
  {
    StagedFile a(target), b(target);
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(is_staged_name_for(fs::path(a.path()).filename().string(), "db.h5"));
    EXPECT_EQ(d.count_staged("db.h5"), 2);
    a.write("x");
  }
  EXPECT_EQ(d.count_staged("db.h5"), 0);
  EXPECT_FALSE(fs::exists(target));
  {
    StagedFile a(target);
    a.write("hello");
    a.commit();
  }
  EXPECT_EQ(slurp(target), "hello");
  EXPECT_EQ(d.count_staged("db.h5"), 0);
}

// An output gets the permissions of an ordinary new file (0666 less the umask), not mkstemp's 0600.
TEST(SafeFile, OutputHasOrdinaryPermissions) {
  TempFolder d;
  const mode_t old = ::umask(022);
  write_file_atomically((d.path / "p.csv").string(), "x\n");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((d.path / "p.csv").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(SafeFile, StagedNamesAreRecognisedExactly) {
  EXPECT_TRUE(is_staged_name_for("a.h5.0123456789abcdef.tmp-moetwin", "a.h5"));
  EXPECT_FALSE(is_staged_name_for("a.h5.tmp-moetwin", "a.h5"));
  EXPECT_FALSE(is_staged_name_for("b.h5.0123456789abcdef.tmp-moetwin", "a.h5"));
  EXPECT_FALSE(is_staged_name_for("a.h5.0123456789abcdeg.tmp-moetwin", "a.h5"));
  EXPECT_FALSE(is_staged_name_for("a.h5.0123456789abcdef.tmp-moetwin.x", "a.h5"));
}

// A folder that cannot be written: an InputError naming the target, nothing created.
TEST(SafeFile, UnwritableFolderIsAnInputError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  TempFolder d;
  fs::permissions(d.path, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string target = (d.path / "x.csv").string();
  try {
    write_file_atomically(target, "x");
    FAIL() << "wrote into a read-only folder";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(target + ": cannot create a temporary file beside it", 0), 0u)
        << e.what();
  }
  fs::permissions(d.path, fs::perms::owner_all);
}

}  // namespace
}  // namespace moetwin
