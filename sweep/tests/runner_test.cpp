// Running a sweep: rows hold what the point predicts (hand-checked relations), invalid points are
// recorded, and the output files are byte-identical whatever the thread count and however often the run
// was stopped and resumed.
#include "moetwin/sweep/runner.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/sweep/grid.hpp"
#include "moetwin/sweep/profile_predictor.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "tiny_sweep.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

using test_support::catalog;

using sweep_test::tiny;

const SweepPredictor& defaults() {
  static ProfileInfo info;
  static const std::unique_ptr<SweepPredictor> p = make_profile_predictor("none", info);
  return *p;
}

double real(const PointRow& row, const char* column) {
  const std::string& cell = row.cells.at(sweep_column(column));
  double v = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  EXPECT_TRUE(ec == std::errc() && end == cell.data() + cell.size()) << column << " = '" << cell << "'";
  return v;
}

const std::string& cell(const PointRow& row, const char* column) {
  return row.cells.at(sweep_column(column));
}

SweepProvenance provenance() {
  SweepProvenance p;
  p.sweep_file = "tiny-sweep.toml";
  p.sweep_hash = tiny().content_hash;
  p.sweep_name = tiny().name;
  p.seed = tiny().base.routing.seed;
  p.catalog_dir = "catalog";
  p.points = tiny().point_count();
  return p;
}

// Runs the tiny sweep into `prefix` (journal included) with the given threads and stop hook; returns
// whether it completed (and then wrote the outputs).
bool run(const std::string& prefix, int threads, std::size_t stop_after) {
  const SweepPaths paths = SweepPaths::from_prefix(prefix);
  SweepJournal journal(paths.journal, sweep_journal_identity(tiny(), "", "c"), sweep_columns().size(),
                       tiny().point_count());
  SweepRunOptions options;
  options.threads = threads;
  options.stop_after = stop_after;
  const SweepRunStats stats = run_sweep_serial(tiny(), defaults(), journal, options);
  EXPECT_EQ(stats.points, 24u);
  EXPECT_EQ(stats.done, stats.recovered + stats.computed);
  if (!stats.complete()) return false;
  write_sweep_outputs(paths, provenance(), journal);
  journal.remove();
  return true;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("moetwin-sweep-runner-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(SweepRunner, ValidPointRow) {
  const PointRow r = evaluate_point(tiny(), 17, defaults());  // 2 nodes, tp2 pp2 ep4, mb 1, deepep-uccl
  ASSERT_EQ(cell(r, "status"), "ok") << cell(r, "error");
  EXPECT_EQ(cell(r, "point"), "17");
  EXPECT_EQ(cell(r, "error"), "");
  EXPECT_EQ(cell(r, "gpus"), "16");
  EXPECT_EQ(cell(r, "dp"), "4");
  EXPECT_EQ(cell(r, "microbatches"), "4");  // 16 / (1 * 4)
  EXPECT_EQ(cell(r, "dispatcher"), "deepep-uccl");
  EXPECT_EQ(cell(r, "routing_seed"), "7");
  EXPECT_EQ(cell(r, "zipf_exponent"), "");
  const double iteration = real(r, "iteration_s");
  EXPECT_GT(iteration, 0);
  // tokens/s = global batch 16 x 1024 tokens / iteration.
  EXPECT_DOUBLE_EQ(real(r, "tokens_s"), 16.0 * 1024.0 / iteration);
  // Unfitted defaults: the band is measured = predicted / (1 + e), e in [-0.5, +0.5].
  EXPECT_DOUBLE_EQ(real(r, "predicted_lo_s"), iteration / 1.5);
  EXPECT_DOUBLE_EQ(real(r, "predicted_hi_s"), iteration / 0.5);
  EXPECT_DOUBLE_EQ(real(r, "hbm_gib"), 80.0 * 1e9 / (1024.0 * 1024.0 * 1024.0));  // H100 80 GB
  EXPECT_GT(real(r, "memory_gib"), 0);
  EXPECT_EQ(cell(r, "fits"), real(r, "memory_gib") <= real(r, "hbm_gib") ? "true" : "false");
  EXPECT_EQ(cell(r, "fits"), "true");  // 4 layers of Qwen3-30B-A3B on 16 H100s
  EXPECT_EQ(cell(r, "a2a_terms"), "defaults");
}

// The a2a_terms column says whose A2A terms a point's prediction used under the shipped live fit: a
// dispatcher with live runs its own, one without (deepep-v2-gin) the generic terms.
TEST(SweepRunner, A2aTermsFollowTheProfile) {
  ProfileInfo info;
  const std::unique_ptr<SweepPredictor> fitted =
      make_profile_predictor(MOETWIN_SOURCE_DIR "/calibrate/profiles/fitted/live-fit.toml", info);
  const PointRow r = evaluate_point(tiny(), 17, *fitted);  // deepep-uccl: measured in the live runs
  ASSERT_EQ(cell(r, "status"), "ok") << cell(r, "error");
  EXPECT_EQ(cell(r, "a2a_terms"), "fitted");
  Scenario gin = make_point(tiny(), 17).scenario;
  gin.dispatcher.name = "deepep-v2-gin";
  EXPECT_EQ(fitted->a2a_terms(gin), "generic");
  EXPECT_EQ(defaults().a2a_terms(gin), "defaults");
}

TEST(SweepRunner, InvalidPointIsARowNotAnError) {
  const PointRow r = evaluate_point(tiny(), 8, defaults());  // 1 node, ep 16
  EXPECT_EQ(cell(r, "status"), "invalid");
  EXPECT_EQ(cell(r, "error").substr(0, 22), "parallelism.ep: 16: ep");
  EXPECT_EQ(cell(r, "ep"), "16");
  EXPECT_EQ(cell(r, "dp"), "8");
  EXPECT_EQ(cell(r, "iteration_s"), "");
  EXPECT_EQ(cell(r, "fits"), "");
  EXPECT_EQ(cell(r, "a2a_terms"), "");
}

TEST(SweepRunner, ThreadsAndResumesGiveByteIdenticalFiles) {
  const fs::path dir = temp_dir("identical");
  ASSERT_TRUE(run((dir / "t1").string(), 1, 0));
  ASSERT_TRUE(run((dir / "t2").string(), 2, 0));
  // Stopped twice, then finished: each run keeps what the previous ones journaled.
  EXPECT_FALSE(run((dir / "r").string(), 2, 5));
  EXPECT_FALSE(run((dir / "r").string(), 1, 7));
  ASSERT_TRUE(run((dir / "r").string(), 2, 0));
  EXPECT_FALSE(fs::exists(dir / "r.journal"));
  for (const char* ext : {".csv", ".h5"}) {
    const std::string reference = read_text_file((dir / "t1").string() + ext);
    EXPECT_EQ(read_text_file((dir / "t2").string() + ext), reference) << ext;
    EXPECT_EQ(read_text_file((dir / "r").string() + ext), reference) << ext;
  }

  // The CSV: header, then one row per point in id order, reals with their column's digits.
  const CsvTable csv = read_csv_file((dir / "t1.csv").string());
  ASSERT_EQ(csv.rows.size(), 24u);
  ASSERT_EQ(csv.header.size(), sweep_columns().size());
  EXPECT_EQ(csv.header[0], "point");
  for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(csv.rows[i].fields[0], std::to_string(i));
  EXPECT_EQ(csv.rows[8].fields[csv.column("status")], "invalid");
  const std::string it = csv.rows[17].fields[csv.column("iteration_s")];
  EXPECT_EQ(it.size() - it.find('.') - 1, 6u) << it;
  EXPECT_EQ(it, format_fixed(real(evaluate_point(tiny(), 17, defaults()), "iteration_s"), 6));

  // The HDF5 file: the same table as datasets, and the provenance block.
  const hid_t file = H5Fopen((dir / "t1.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t points = H5Dopen2(file, "/points/point", H5P_DEFAULT);
  std::vector<std::int64_t> ids(24);
  ASSERT_GE(H5Dread(points, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data()), 0);
  for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(ids[i], static_cast<std::int64_t>(i));
  H5Dclose(points);
  const hid_t dp = H5Dopen2(file, "/points/dp", H5P_DEFAULT);
  std::vector<std::int64_t> dps(24);
  ASSERT_GE(H5Dread(dp, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, dps.data()), 0);
  EXPECT_EQ(dps[0], 8);   // 1 node, tp1 pp1
  EXPECT_EQ(dps[17], 4);  // 2 nodes, tp2 pp2
  H5Dclose(dp);
  const hid_t seed_attr = H5Aopen_by_name(file, "/provenance", "seed", H5P_DEFAULT, H5P_DEFAULT);
  std::int64_t seed = 0;
  ASSERT_GE(H5Aread(seed_attr, H5T_NATIVE_INT64, &seed), 0);
  EXPECT_EQ(seed, 7);
  H5Aclose(seed_attr);
  const hid_t hash_attr = H5Aopen_by_name(file, "/provenance", "sweep_hash", H5P_DEFAULT, H5P_DEFAULT);
  const hid_t type = H5Aget_type(hash_attr);
  std::string hash(H5Tget_size(type), '\0');
  ASSERT_GE(H5Aread(hash_attr, type, hash.data()), 0);
  EXPECT_EQ(hash, tiny().content_hash);
  H5Tclose(type);
  H5Aclose(hash_attr);
  H5Fclose(file);
  fs::remove_all(dir);
}

TEST(SweepRunner, CatalogHashCoversTheFourCatalogFiles) {
  const std::string dir = MOETWIN_SOURCE_DIR "/catalog/data";
  std::string bytes;
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml"}) {
    bytes += read_text_file(dir + "/" + f);
  }
  EXPECT_EQ(sweep_catalog_hash(dir), hex64(fnv1a64(bytes)));
  EXPECT_EQ(sweep_journal_identity(tiny(), "", "0123"),
            "sweep=" + tiny().content_hash + " points=24 columns=" + std::to_string(sweep_columns().size()) +
                " profile=defaults catalog=0123");
}

TEST(SweepRunner, CalibrationHashCoversTheProfilesAndJoinsTheIdentity) {
  const fs::path dir = fs::temp_directory_path() / "moetwin_sweep_calibration_hash";
  fs::remove_all(dir);
  fs::create_directories(dir / "fitted");
  std::ofstream(dir / "b.toml") << "gpu = \"B\"\n";
  std::ofstream(dir / "a.toml") << "gpu = \"A\"\n";
  std::ofstream(dir / "notes.txt") << "not a profile\n";
  std::ofstream(dir / "fitted" / "live-fit.toml") << "never read by the lookup\n";
  // Name order, each name + NUL + bytes; the subfolder and non-TOML files are not part of it.
  const std::string bytes =
      std::string("a.toml") + '\0' + "gpu = \"A\"\n" + "b.toml" + '\0' + "gpu = \"B\"\n";
  const std::string h = sweep_calibration_hash(dir.string());
  EXPECT_EQ(h, hex64(fnv1a64(bytes)));
  std::ofstream(dir / "fitted" / "live-fit.toml") << "changed\n";
  EXPECT_EQ(sweep_calibration_hash(dir.string()), h);
  std::ofstream(dir / "b.toml") << "gpu = \"B2\"\n";  // a re-measured profile: another identity
  EXPECT_NE(sweep_calibration_hash(dir.string()), h);
  EXPECT_EQ(sweep_calibration_hash(""), "none");
  EXPECT_EQ(sweep_calibration_hash((dir / "missing").string()), "none");
  EXPECT_EQ(sweep_journal_identity(tiny(), "", "0123", "beef"),
            "sweep=" + tiny().content_hash + " points=24 columns=" + std::to_string(sweep_columns().size()) +
                " profile=defaults catalog=0123 calibration=beef");
  fs::remove_all(dir);
}

TEST(SweepProgress, PlainLinesEveryNPoints) {
  std::ostringstream out;
  ProgressOptions options;
  options.out = &out;
  options.every = 2;
  SweepProgress progress(options, 10, 4, 6);
  for (int i = 0; i < 5; ++i) progress.advance();
  std::istringstream lines(out.str());
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 3u);  // the opening line, then after points 2 and 4 of this run
  EXPECT_EQ(got[0], "sweep: 10 points, 4 already done (journal), 6 to compute");
  EXPECT_EQ(got[1].rfind("sweep: 6/10 points (60.0%), ", 0), 0u) << got[1];
  EXPECT_EQ(got[2].rfind("sweep: 8/10 points (80.0%), ", 0), 0u) << got[2];
  progress.advance();  // the last point always prints
  progress.finish();
  EXPECT_NE(out.str().find("sweep: 10/10 points (100.0%)"), std::string::npos);
  EXPECT_NE(out.str().find("sweep: computed 6 points in "), std::string::npos);
}

// validate --fit, plan and predict --runs reuse the bar with their own label and unit; on a terminal a note
// clears the bar's line, prints, and redraws the bar below it.
TEST(SweepProgress, TerminalBarWithLabelStageAndNotes) {
  std::ostringstream out;
  ProgressOptions options;
  options.out = &out;
  options.tty = true;
  options.label = "validate --fit";
  options.unit = "replays";
  options.journal_line = false;
  SweepProgress progress(options, 4, 0, 4);
  progress.set_stage("round 1/4");
  progress.advance();
  progress.note("fit: round 1: objective 0.01");
  progress.set_stage("round 2/4");
  progress.add_work(4);
  for (int i = 0; i < 7; ++i) progress.advance();
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.find("sweep"), std::string::npos) << text;
  EXPECT_NE(text.find("\rvalidate --fit: round 1/4 ["), std::string::npos) << text;
  EXPECT_NE(text.find("\r\033[Kfit: round 1: objective 0.01\n"), std::string::npos) << text;
  EXPECT_NE(text.find("validate --fit: round 2/4 [##############################] 8/8 100.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" replays/s  ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("validate --fit: computed 8 replays in "), std::string::npos) << text;
  EXPECT_NE(text.find(" s/replay wall)"), std::string::npos) << text;
}

}  // namespace
}  // namespace moetwin
