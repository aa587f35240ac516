// `moetwin-calibrate fabric --provider efa|tcp|shm --db OUT.h5`: libfabric RDM latency and bandwidth
// sweep between two endpoints of this process; results appended to the database.
#include <rdma/fabric.h>

#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/fabric_bench.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::calibrate_cli {

// CUDA builds define this (cmd_fabric_cuda.cpp) to put the buffers in GPU memory; else it throws.
FabricBuffers cuda_fabric_buffers(int device);

void add_fabric_command(CLI::App& app) {
  struct Options {
    FabricBenchOptions bench;
    std::string db;
    bool gpu = false;
    int device = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("fabric", "libfabric FI_EP_RDM ping-pong latency and streaming bandwidth");
  cmd->add_option("--provider", o->bench.provider, "libfabric provider (efa on AWS; tcp, shm for tests)")
      ->capture_default_str();
  cmd->add_option("--domain-a", o->bench.domain_a, "Domain (NIC) of endpoint A, e.g. rdmap16s27-rdm");
  cmd->add_option("--domain-b", o->bench.domain_b, "Domain (NIC) of endpoint B (default: same as A)");
  cmd->add_option("--min-bytes", o->bench.min_bytes, "Smallest message")->capture_default_str();
  cmd->add_option("--max-bytes", o->bench.max_bytes, "Largest message")->capture_default_str();
  cmd->add_option("--iters", o->bench.iterations, "Ping-pongs per size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bw-iters", o->bench.bw_iterations, "Streaming windows per size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--window", o->bench.window, "Messages in flight when streaming")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout", o->bench.timeout_s, "Seconds before a stalled wait aborts (exit 4)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--gpu", o->gpu, "GPU buffers through FI_HMEM (CUDA builds)");
  cmd->add_option("--device", o->device, "CUDA device of the buffers")->capture_default_str();
  cmd->add_option("--db", o->db, "Database to create or extend")->required();
  cmd->callback([o] {
    FabricBenchOptions options = o->bench;
    if (o->gpu) options.buffers = cuda_fabric_buffers(o->device);
    const FabricBenchResult result = run_fabric_bench(options);
    CalibrationDb db = read_or_create_calibration_db(o->db);
    if (db.experiments.empty()) db.provenance = base_provenance("moetwin-calibrate fabric");
    db.provenance.libfabric_version = result.libfabric_version;
    db.provenance.provider = result.provider;
    for (const Experiment& e : result.experiments) {
      const SummaryStats s = e.stats();
      const double bytes = e.param("bytes");
      std::cout << e.name << ": median " << format_fixed(s.median * 1e6, 3) << " us";
      if (e.kind == "fabric_bandwidth")
        std::cout << ", " << format_fixed(bytes / s.median / 1e9, 3) << " GB/s";
      std::cout << '\n';
      db.put(e);
    }
    write_calibration_db(db, o->db);
  });
}

}  // namespace moetwin::calibrate_cli
