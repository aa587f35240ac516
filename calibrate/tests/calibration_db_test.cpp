#include "moetwin/calibrate/calibration_db.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/safe_file.hpp"

namespace moetwin {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
}

TEST(SummaryStats, HandComputedPercentiles) {
  // Sorted: 1 2 3 4 5 6 7 8 9 10 11. Positions: p10 -> 1.0 -> 2, median -> 5 -> 6, p90 -> 9 -> 10.
  const SummaryStats s = summarize({11, 3, 1, 2, 5, 4, 6, 7, 8, 10, 9});
  EXPECT_EQ(s.count, 11);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 11);
  EXPECT_DOUBLE_EQ(s.mean, 6);
  EXPECT_DOUBLE_EQ(s.median, 6);
  EXPECT_DOUBLE_EQ(s.p10, 2);
  EXPECT_DOUBLE_EQ(s.p90, 10);
}

TEST(SummaryStats, InterpolatesBetweenSamples) {
  // 4 samples: median position 1.5 -> (20+30)/2; p10 position 0.3 -> 10 + 0.3*10; p90 2.7 -> 30+0.7*10.
  const SummaryStats s = summarize({40, 10, 30, 20});
  EXPECT_DOUBLE_EQ(s.median, 25);
  EXPECT_DOUBLE_EQ(s.p10, 13);
  EXPECT_DOUBLE_EQ(s.p90, 37);
  EXPECT_DOUBLE_EQ(s.mean, 25);
}

TEST(SummaryStats, EmptyIsZero) {
  EXPECT_EQ(summarize({}).count, 0);
}

CalibrationDb sample_db() {
  CalibrationDb db;
  db.provenance.gpu_name = "NVIDIA H200";
  db.provenance.gpu_count = 8;
  db.provenance.sm_count = 132;
  db.provenance.sm_clock_hz = 1.98e9;
  db.provenance.mem_clock_hz = 3.201e9;
  db.provenance.driver_version = "580.159.04";
  db.provenance.cuda_version = "13.0";
  db.provenance.cublas_version = "13.0.0";
  db.provenance.nccl_version = "2.27.7";
  db.provenance.libfabric_version = "1.17";
  db.provenance.provider = "efa";
  db.provenance.host = "node-1";
  db.provenance.time_utc = "2026-11-29T08:00:00Z";
  db.provenance.git_revision = "abc123";
  db.provenance.tool = "test";
  Experiment gemm;
  gemm.name = "gemm.m8192.n8192.k8192";
  gemm.kind = "gemm";
  gemm.unit = "s";
  gemm.params = {{"m", 8192}, {"n", 8192}, {"k", 8192}};
  gemm.labels = {{"dtype", "bf16"}, {"layout", "TN"}};
  gemm.samples = {1.4e-3, 1.5e-3, 1.45e-3};
  db.put(gemm);
  Experiment empty;
  empty.name = "launch.empty";
  empty.kind = "launch";
  empty.unit = "s";
  db.put(empty);
  return db;
}

TEST(CalibrationDb, RoundTripKeepsEverything) {
  const std::string path = temp_path("moetwin-db-roundtrip.h5");
  const CalibrationDb db = sample_db();
  write_calibration_db(db, path);
  const CalibrationDb back = read_calibration_db(path);
  EXPECT_EQ(back.provenance, db.provenance);
  ASSERT_EQ(back.experiments.size(), 2u);
  EXPECT_EQ(back.experiments.at("gemm.m8192.n8192.k8192"), db.experiments.at("gemm.m8192.n8192.k8192"));
  EXPECT_EQ(back.experiments.at("launch.empty"), db.experiments.at("launch.empty"));
  EXPECT_DOUBLE_EQ(back.experiments.at("gemm.m8192.n8192.k8192").stats().median, 1.45e-3);
  EXPECT_DOUBLE_EQ(back.experiments.at("gemm.m8192.n8192.k8192").param("k"), 8192);
  EXPECT_EQ(back.of_kind("gemm").size(), 1u);
  // No temporary file of it is left (common/safe_file.hpp names them PATH.<16 hex>.tmp-moetwin).
  const std::filesystem::path p(path);
  for (const auto& e : std::filesystem::directory_iterator(p.parent_path()))
    EXPECT_FALSE(is_staged_name_for(e.path().filename().string(), p.filename().string())) << e.path();
  std::filesystem::remove(path);
}

// Found by tests/fuzz/calibration_db_fuzz.cpp: HDF5 strings end at NUL, so a string holding one came back
// cut. The writer refuses it and leaves no file behind.
TEST(CalibrationDb, StringWithNulIsRefusedNotCut) {
  const std::string path = temp_path("moetwin-db-nul.h5");
  CalibrationDb db = sample_db();
  db.provenance.gpu_name = std::string("H200\0x", 6);
  try {
    write_calibration_db(db, path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": provenance: a string with a NUL byte: text without NUL (HDF5 strings "
                  "end at NUL)");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  db = sample_db();
  Experiment e = db.experiments.at("launch.empty");
  e.labels["note"] = std::string("a\0b", 3);
  db.put(e);
  EXPECT_THROW(write_calibration_db(db, path), InputError);
}

// Found by tests/fuzz/calibration_db_fuzz.cpp: counts come back through a double, so one above 2^53 came back
// rounded (and a larger one would overflow the cast back). The writer refuses them.
TEST(CalibrationDb, ProvenanceCountsBeyondTwoToThe53AreRefused) {
  const std::string path = temp_path("moetwin-db-count.h5");
  CalibrationDb db = sample_db();
  db.provenance.gpu_count = (std::int64_t{1} << 53) + 1;
  try {
    write_calibration_db(db, path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": provenance gpu_count: 9007199254740993: a count in [0, 2^53]");
  }
  db.provenance.gpu_count = -1;
  EXPECT_THROW(write_calibration_db(db, path), InputError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(CalibrationDb, PutReplacesAndRejectsSlash) {
  CalibrationDb db = sample_db();
  Experiment e = db.experiments.at("launch.empty");
  e.samples = {1, 2};
  db.put(e);
  EXPECT_EQ(db.experiments.at("launch.empty").samples.size(), 2u);
  e.name = "a/b";
  EXPECT_THROW(db.put(e), std::invalid_argument);
}

TEST(CalibrationDb, RepeatedRunPoolsSamplesAndAddsNewExperiments) {
  CalibrationDb db = sample_db();
  CalibrationDb repeat = sample_db();
  repeat.provenance.host = "node-2";
  Experiment& gemm = repeat.experiments.at("gemm.m8192.n8192.k8192");
  gemm.samples = {1.6e-3, 1.7e-3};
  gemm.params["algo_index"] = 3;  // another cuBLASLt candidate won this run: still the same shape
  Experiment extra = db.experiments.at("launch.empty");
  extra.name = "launch.tiny";
  extra.samples = {4e-6};
  repeat.put(extra);
  pool_repeated_run(db, repeat, "repeat.h5");
  const Experiment& pooled = db.experiments.at("gemm.m8192.n8192.k8192");
  ASSERT_EQ(pooled.samples.size(), 5u);
  EXPECT_DOUBLE_EQ(pooled.stats().median, 1.5e-3);   // of 1.4 1.45 1.5 1.6 1.7 ms
  EXPECT_EQ(pooled.params.count("algo_index"), 0u);  // the first run's parameters stay
  EXPECT_EQ(db.experiments.at("launch.tiny").samples, std::vector<double>{4e-6});
  EXPECT_EQ(db.provenance.host, "node-1");
}

TEST(CalibrationDb, RepeatedRunOfAnotherMeasurementIsInputErrorAndPoolsNothing) {
  CalibrationDb db = sample_db();
  CalibrationDb repeat = sample_db();
  repeat.experiments.at("launch.empty").unit = "ms";  // checked after the GEMM, which would pool
  try {
    pool_repeated_run(db, repeat, "repeat.h5");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("repeat.h5"), std::string::npos) << what;
    EXPECT_NE(what.find("experiment launch.empty"), std::string::npos) << what;
  }
  EXPECT_EQ(db.experiments.at("gemm.m8192.n8192.k8192").samples.size(), 3u);  // nothing pooled
  repeat = sample_db();
  repeat.experiments.at("gemm.m8192.n8192.k8192").params["k"] = 4096;  // another shape, same name
  EXPECT_THROW(pool_repeated_run(db, repeat, "repeat.h5"), InputError);
}

TEST(CalibrationDb, RejectsMissingAndNonHdf5Files) {
  EXPECT_THROW(read_calibration_db("/nonexistent/x.h5"), InputError);
  const std::string path = temp_path("moetwin-not-hdf5.h5");
  std::ofstream(path) << "not hdf5\n";
  try {
    read_calibration_db(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a calibration database"), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(CalibrationDb, UnwritableDirectoryIsInputError) {
  EXPECT_THROW(write_calibration_db(sample_db(), "/nonexistent-dir/x.h5"), InputError);
}

TEST(CalibrationDb, BaseProvenanceHasTimeAndRevision) {
  const Provenance p = base_provenance("unit test");
  EXPECT_EQ(p.tool, "unit test");
  EXPECT_EQ(p.time_utc.size(), 20u);  // YYYY-MM-DDTHH:MM:SSZ
  EXPECT_FALSE(p.git_revision.empty());
}

}  // namespace
}  // namespace moetwin
