// libfabric FI_EP_RDM ping-pong latency and streaming bandwidth between two endpoints of one process
// (two NICs of one node when two domains are named, or loopback through one domain). Every wait is
// bounded by a deadline; a missing provider or a stalled fabric throws NoDeviceError (exit code 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin {

// Where message buffers live. Host memory by default; CUDA builds pass a device allocator so the
// provider moves GPU memory through FI_HMEM (iface FI_HMEM_CUDA).
struct FabricBuffers {
  std::function<void*(std::size_t bytes)> allocate;
  std::function<void(void*)> release;
  bool cuda = false;  // registered with iface FI_HMEM_CUDA
  int cuda_device = 0;
};
FabricBuffers host_fabric_buffers();

struct FabricBenchOptions {
  std::string provider = "tcp";  // libfabric provider name ("efa", "tcp", "shm", ...)
  std::string domain_a;          // domain (NIC) of endpoint A; empty = the provider's first
  std::string domain_b;          // domain of endpoint B; empty = same as A
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 4 << 20;  // capped by the provider's max_msg_size
  int warmup = 10;
  int iterations = 100;    // ping-pongs per size (samples)
  int window = 64;         // messages in flight per streaming sample
  int bw_iterations = 20;  // streaming samples per size
  double timeout_s = 10;   // per wait; a stall beyond it aborts the run
  FabricBuffers buffers = host_fabric_buffers();
};

struct FabricBenchResult {
  std::vector<Experiment> experiments;  // fabric_latency.* and fabric_bandwidth.* per size
  std::string provider;                 // as the provider names itself, e.g. "tcp;ofi_rxm"
  std::string libfabric_version;        // runtime library version, e.g. "1.17"
};

FabricBenchResult run_fabric_bench(const FabricBenchOptions& options);

// The message sizes of a sweep: powers of two from min_bytes to max_bytes (both included).
std::vector<std::size_t> fabric_sizes(std::size_t min_bytes, std::size_t max_bytes);

}  // namespace moetwin
