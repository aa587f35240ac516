// CUDA builds: `moetwin-calibrate gemm|kernels|launch|nccl|all --db OUT.h5`. Each appends its
// experiments to the database with GPU provenance. A watchdog bounds the whole run (--timeout):
// a hung driver or NCCL call ends the process with exit code 4 instead of hanging the node's booking.
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "../gpu/gemm_bench.hpp"
#include "../gpu/gpu_common.hpp"
#include "../gpu/kernels_bench.hpp"
#include "../gpu/launch_bench.hpp"
#include "../gpu/nccl_bench.hpp"
#include "commands.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin::calibrate_cli {

namespace {

// Ends the process (exit 4) when the guarded scope outlives `seconds`. Binary code, not library code:
// the only place that may end the process early.
class Watchdog {
 public:
  explicit Watchdog(double seconds) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
        std::cerr << "no device: GPU calibration did not finish within " << seconds << " s (--timeout)\n";
        std::_Exit(4);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

struct GpuOptions {
  std::string db;
  bool quick = false;
  int samples = 10;
  double timeout_s = 900;
  std::string only;
  int rounds = 5;
  double cooldown_s = 0.02;
  int max_gpus = 0;
  std::size_t nccl_max_bytes = 1ULL << 30;
  std::string precision = "bf16";  // gemm: "bf16" or "fp8"
  bool fp8_fast_accum = false;
};

void run(const GpuOptions& o, const std::string& what) {
  Watchdog watchdog(o.timeout_s);
  const bool fp8_only = what == "gemm" && o.precision == "fp8";
  Provenance provenance =
      gpu::gpu_provenance("moetwin-calibrate " + what + (fp8_only ? " --precision fp8" : ""));
  std::vector<Experiment> experiments;
  const auto append = [&](std::vector<Experiment> more) {
    for (Experiment& e : more) experiments.push_back(std::move(e));
  };
  if (what == "launch" || what == "all") append(gpu::run_launch_bench(o.samples));
  if (what == "kernels" || what == "all") append(gpu::run_kernel_bench({o.quick, o.samples}));
  if (what == "gemm" || what == "all") {
    gpu::GemmBenchOptions g;
    g.quick = o.quick;
    g.samples = o.samples;
    g.only = o.only;
    g.rounds = o.rounds;
    g.cooldown_s = o.cooldown_s;
    g.fp8_fast_accum = o.fp8_fast_accum;
    if (fp8_only) g.precision = GemmPrecision::fp8;
    append(gpu::run_gemm_bench(g, provenance.cublas_version));
    // `all` measures the FP8 GEMMs too where the GPU has FP8 tensor cores (the same shapes again: about
    // as long as the bf16 sweep), so one run feeds both the [gemm] and the [gemm_fp8] curves.
    if (what == "all") {
      if (gpu::compute_capability() >= 89) {
        g.precision = GemmPrecision::fp8;
        append(gpu::run_gemm_bench(g, provenance.cublas_version));
      } else {
        std::cerr
            << "gemm --precision fp8: skipped, the GPU has no FP8 tensor cores (compute capability < 8.9)\n";
      }
    }
  }
  if (what == "nccl" || what == "all") {
    gpu::NcclBenchOptions n;
    n.max_gpus = o.max_gpus;
    n.samples = o.samples;
    n.max_bytes = o.nccl_max_bytes;
    append(gpu::run_nccl_bench(n, provenance.nccl_version));
  }
  CalibrationDb db = read_or_create_calibration_db(o.db);
  // The newest GPU run's provenance describes the database; fields a GPU run cannot know are kept.
  provenance.libfabric_version = db.provenance.libfabric_version;
  provenance.provider = db.provenance.provider;
  if (provenance.cublas_version.empty()) provenance.cublas_version = db.provenance.cublas_version;
  if (provenance.nccl_version.empty()) provenance.nccl_version = db.provenance.nccl_version;
  db.provenance = provenance;
  for (Experiment& e : experiments) db.put(std::move(e));
  write_calibration_db(db, o.db);
  std::cout << "wrote " << experiments.size() << " experiments to " << o.db << '\n';
}

}  // namespace

void add_gpu_commands(CLI::App& app) {
  const std::pair<const char*, const char*> commands[] = {
      {"gemm",
       "cuBLASLt bf16 (or --precision fp8) GEMMs, grouped (batched) expert GEMMs and attention-core GEMMs"},
      {"kernels", "MoE permute/unpermute/router kernels and the D2D copy reference"},
      {"launch", "Kernel launch latency and rate, with and without CUDA graphs"},
      {"nccl", "NCCL all-reduce/reduce-scatter/all-gather/all-to-all/send-recv over 1..N GPUs"},
      {"all", "launch, kernels, gemm (bf16, and fp8 where the GPU has it) and nccl in one run"}};
  for (const auto& [name, help] : commands) {
    auto o = std::make_shared<GpuOptions>();
    CLI::App* cmd = app.add_subcommand(name, help);
    cmd->add_option("--db", o->db, "Database to create or extend")->required();
    cmd->add_option("--samples", o->samples, "Timed samples per experiment")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--timeout", o->timeout_s, "Seconds before the run is abandoned (exit 4)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--quick", o->quick, "Fewer shapes and sizes (smoke run)");
    cmd->add_option("--only", o->only, "gemm: only shapes whose name contains this");
    cmd->add_option("--rounds", o->rounds, "gemm: rounds over all shapes the samples are spread over")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--cooldown", o->cooldown_s,
                    "gemm: idle seconds before each sample (0: back to back, the power-capped steady state)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--max-gpus", o->max_gpus, "nccl: most GPUs to use (default all)");
    if (std::string(name) == "gemm") {
      cmd->add_option(
             "--precision", o->precision,
             "bf16, or fp8: E4M3 A and B with per-tensor scales, bf16 output (compute capability >= 8.9)")
          ->capture_default_str()
          ->check(CLI::IsMember({"bf16", "fp8"}));
      cmd->add_flag("--fp8-fast-accum", o->fp8_fast_accum,
                    "fp8: cuBLASLt fast accumulation (Transformer Engine's forward GEMM setting)");
    }
    cmd->add_option("--nccl-max-bytes", o->nccl_max_bytes, "nccl: largest message")->capture_default_str();
    const std::string what = name;
    cmd->callback([o, what] { run(*o, what); });
  }
}

}  // namespace moetwin::calibrate_cli
