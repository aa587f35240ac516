// The resume journal: lines round-trip, corrupt and torn lines are dropped (and the file repaired before
// the next append), a journal of another sweep is refused.
#include "moetwin/sweep/journal.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

PointRow row(std::size_t id, const std::string& a, const std::string& b) {
  return PointRow{id, {a, b}};
}

std::string temp_journal(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("moetwin-journal-test-" + name);
  fs::remove(p);
  return p.string();
}

TEST(SweepJournal, LineRoundTripWithEscapes) {
  const PointRow r = row(12, "a\tb\\c\nd\re", "");
  const std::string line = SweepJournal::encode(r);
  // id, checksum of "12\t<escaped cells>", escaped cells.
  const std::string payload = "12\ta\\tb\\\\c\\nd\\re\t";
  EXPECT_EQ(line, "12\t" + hex64(fnv1a64(payload)) + "\ta\\tb\\\\c\\nd\\re\t");
  PointRow back;
  ASSERT_TRUE(SweepJournal::decode(line, 2, back));
  EXPECT_EQ(back.id, 12u);
  EXPECT_EQ(back.cells, r.cells);
  // A flipped character, a wrong width, a bad escape: all refused.
  std::string flipped = line;
  flipped.back() = 'x';
  EXPECT_FALSE(SweepJournal::decode(flipped, 2, back));
  EXPECT_FALSE(SweepJournal::decode(line, 3, back));
  const std::string bad_escape = "1\t" + hex64(fnv1a64("1\t\\q\tx")) + "\t\\q\tx";
  EXPECT_FALSE(SweepJournal::decode(bad_escape, 2, back));
}

TEST(SweepJournal, ResumesAndRepairsATornTail) {
  const std::string path = temp_journal("torn");
  {
    SweepJournal j(path, "sweep=abc", 2, 10);
    EXPECT_EQ(j.recovered(), 0u);
    j.append(row(3, "x", "y"));
    j.append(row(1, "p", "q"));
    j.append(row(3, "ignored", "dup"));  // already there: ignored
  }
  EXPECT_EQ(read_text_file(path), "moetwin-sweep-journal\t1\tsweep=abc\n" +
                                      SweepJournal::encode(row(3, "x", "y")) + "\n" +
                                      SweepJournal::encode(row(1, "p", "q")) + "\n");
  // A process killed inside a write leaves a line without its newline.
  std::ofstream(path, std::ios::app) << SweepJournal::encode(row(5, "t", "u")).substr(0, 9);
  {
    SweepJournal j(path, "sweep=abc", 2, 10);
    EXPECT_EQ(j.recovered(), 2u);
    EXPECT_EQ(j.dropped(), 1u);
    EXPECT_TRUE(j.has(1));
    EXPECT_TRUE(j.has(3));
    EXPECT_FALSE(j.has(5));
    EXPECT_EQ(j.rows().at(3).cells[1], "y");
    j.append(row(5, "t", "u"));
  }
  SweepJournal j(path, "sweep=abc", 2, 10);
  EXPECT_EQ(j.recovered(), 3u);
  EXPECT_EQ(j.dropped(), 0u);
  // Rewritten in id order at the repair, then appended.
  EXPECT_EQ(read_text_file(path), "moetwin-sweep-journal\t1\tsweep=abc\n" +
                                      SweepJournal::encode(row(1, "p", "q")) + "\n" +
                                      SweepJournal::encode(row(3, "x", "y")) + "\n" +
                                      SweepJournal::encode(row(5, "t", "u")) + "\n");
  j.remove();
  EXPECT_FALSE(fs::exists(path));
}

TEST(SweepJournal, DropsOutOfRangeIdsAndRefusesAnotherSweep) {
  const std::string path = temp_journal("other");
  {
    SweepJournal j(path, "sweep=abc", 2, 10);
    j.append(row(9, "a", "b"));
  }
  {
    SweepJournal j(path, "sweep=abc", 2, 5);  // id 9 cannot belong to a 5-point sweep
    EXPECT_EQ(j.recovered(), 0u);
    EXPECT_EQ(j.dropped(), 1u);
  }
  try {
    SweepJournal j(path, "sweep=def", 2, 10);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        path +
            ":1: journal: \"moetwin-sweep-journal\t1\tsweep=abc\": the journal of this sweep "
            "(\"moetwin-sweep-journal\t1\tsweep=def\"): the sweep file, its base or the profile changed "
            "since it was written; delete the journal to start over");
  }
  fs::remove(path);
}

}  // namespace
}  // namespace moetwin
