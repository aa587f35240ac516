#include "moetwin/common/csv.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <sstream>

#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

TEST(Csv, SkipsCommentsAndReadsHeaderAndRows) {
  const auto t = parse_csv("# comment\na,b\n1,2\n# mid\n3,\"x,y\"\n", "t.csv");
  ASSERT_EQ(t.header.size(), 2u);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].line, 3);
  EXPECT_EQ(t.rows[1].fields[1], "x,y");
  EXPECT_EQ(t.rows[1].line, 5);
  EXPECT_EQ(t.column("b"), 1u);
}

TEST(Csv, RaggedRowNamesFileAndLine) {
  try {
    parse_csv("a,b\n1,2,3\n", "runs.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "runs.csv:2: row: 3 fields: 2 fields as in the header");
  }
}

TEST(Csv, RejectsUnterminatedQuoteAndDuplicateHeader) {
  EXPECT_THROW(parse_csv("a,b\n\"1,2\n", "x.csv"), InputError);
  EXPECT_THROW(parse_csv("a,a\n1,2\n", "x.csv"), InputError);
  EXPECT_THROW(parse_csv("# only comments\n", "x.csv"), InputError);
  EXPECT_THROW(parse_csv("a,b\n", "x.csv").column("c"), InputError);
}

TEST(Csv, EscapeRoundTrips) {
  std::ostringstream out;
  write_csv_line(out, {"plain", "a,b", "q\"q"});
  EXPECT_EQ(out.str(), "plain,\"a,b\",\"q\"\"q\"\n");
  const auto t = parse_csv("h1,h2,h3\n" + out.str(), "x");
  EXPECT_EQ(t.rows[0].fields[2], "q\"q");
}

using test_support::error_of;

// What the cell reader accepts and how it names what it refuses: file, line, column, cell, expectation.
TEST(CsvRowReader, ReadsRangedCellsAndNamesWhatItRefuses) {
  const CsvTable t = parse_csv("# c\nn,x,kind,blank\n3,2.5,b,\n", "f.csv");
  const CsvRowReader r(t, t.rows[0]);
  EXPECT_EQ(r.int32("n", 1, 8), 3);
  EXPECT_DOUBLE_EQ(r.number("x", 0, 10, "a number"), 2.5);
  EXPECT_EQ(r.choice("kind", {"a", "b"}), "b");
  EXPECT_TRUE(r.has("blank"));
  EXPECT_FALSE(r.has("missing"));
  const auto error = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error([&] { r.int32("n", 4, 8); }), "f.csv:3: n: 3: an integer in [4, 8]");
  EXPECT_EQ(error([&] { r.integer("x", 0, 8); }), "f.csv:3: x: 2.5: an integer in [0, 8]");
  EXPECT_EQ(error([&] { r.number("x", 3, 10, "at least 3"); }), "f.csv:3: x: 2.5: at least 3");
  EXPECT_EQ(error([&] { r.number("blank", 0, 1, "a number"); }), "f.csv:3: blank: \"\": a number");
  EXPECT_EQ(error([&] { r.choice("kind", {"a", "c"}); }), "f.csv:3: kind: b: one of a, c");
}

TEST(Files, MissingFileAndDirectoryAreNamedAsSuch) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "moetwin-csv-files-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_EQ(error_of([&] { read_text_file((dir / "none.toml").string()); }),
            (dir / "none.toml").string() + ": no such file");
  EXPECT_EQ(error_of([&] { read_text_file(dir.string()); }),
            dir.string() + ": is a directory, expected a file");
  // Outputs: a missing folder is named, never created; a directory is not a file.
  const std::string missing = (dir / "no-such-folder" / "out.csv").string();
  EXPECT_EQ(
      error_of([&] { write_file_atomically(missing, "x"); }),
      missing + ": output folder " + (dir / "no-such-folder").string() + " does not exist (create it first)");
  EXPECT_FALSE(fs::exists(dir / "no-such-folder"));
  EXPECT_EQ(error_of([&] { write_file_atomically(dir.string(), "x"); }),
            dir.string() + ": is a directory, expected a file to write");
  write_file_atomically((dir / "ok.csv").string(), "a\n");
  EXPECT_EQ(read_text_file((dir / "ok.csv").string()), "a\n");
  EXPECT_NO_THROW(check_output_path("relative-file-in-cwd.csv"));
  fs::remove_all(dir);
}

// Excel's "CSV UTF-8" and other Windows tools start the file with a byte-order mark: it is not part of the
// first column's name (shared/data/bad-inputs/bom.csv read "campaign" as missing).
TEST(Csv, ByteOrderMarkIsSkipped) {
  const auto t = parse_csv(
      "\xEF\xBB\xBF"
      "campaign,b\n1,2\n",
      "bom.csv");
  EXPECT_EQ(t.header.at(0), "campaign");
  EXPECT_EQ(t.rows.at(0).line, 2);
  // Only at the start of the file.
  EXPECT_EQ(parse_csv("a,b\n\xEF\xBB\xBF"
                      "1,2\n",
                      "t.csv")
                .rows.at(0)
                .fields.at(0),
            "\xEF\xBB\xBF"
            "1");
}

// A device is written in place (renaming over /dev/full would replace the device) and its write error
// reported; a failed write leaves no temporary file.
TEST(Csv, WriteErrorsAreReported) {
  namespace fs = std::filesystem;
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    write_file_atomically("/dev/full", std::string(1 << 16, 'x'));
    FAIL() << "wrote to /dev/full";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/dev/full: write error: ", 0), 0u) << e.what();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  for (const auto& e : fs::directory_iterator("/dev"))
    EXPECT_FALSE(is_staged_name_for(e.path().filename().string(), "full"));
  // /dev/null takes anything.
  EXPECT_NO_THROW(write_file_atomically("/dev/null", "x"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace moetwin
