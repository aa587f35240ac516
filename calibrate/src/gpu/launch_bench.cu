// Launch-latency calibration (launch_bench.hpp).
#include <cuda_runtime.h>

#include <chrono>
#include <iostream>

#include "gpu_common.hpp"
#include "launch_bench.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::gpu {

namespace {

__global__ void empty_kernel() {}
__global__ void tiny_kernel(int* p) {
  p[threadIdx.x] += 1;
}

constexpr int kBatch = 1000;

double host_seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

std::vector<Experiment> run_launch_bench(int samples) {
  require_gpu();
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  DeviceMemory scratch(32 * sizeof(int));
  check(cudaMemset(scratch.get(), 0, 32 * sizeof(int)), "cudaMemset");
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<Experiment> out;

  for (const bool tiny : {false, true}) {
    const auto launch = [&] {
      if (tiny)
        tiny_kernel<<<1, 32, 0, stream>>>(scratch.as<int>());
      else
        empty_kernel<<<1, 32, 0, stream>>>();
    };
    const std::string kernel = tiny ? "tiny" : "empty";
    const auto add = [&](const std::string& mode, std::vector<double> values) {
      Experiment e;
      e.name = "launch." + kernel + "." + mode;
      e.kind = "launch";
      e.unit = "s";
      e.labels = {{"kernel", kernel}, {"mode", mode}};
      e.params = {{"batch", mode == "sync_latency" || mode == "graph_sync" ? 1.0 : kBatch}};
      e.samples = std::move(values);
      std::cout << e.name << ": " << format_fixed(e.stats().median * 1e6, 3) << " us\n";
      out.push_back(std::move(e));
    };
    for (int i = 0; i < 100; ++i) launch();  // warm-up: module load, first-launch costs
    check(cudaStreamSynchronize(stream), "warm-up");

    std::vector<double> sync_latency;
    for (int i = 0; i < samples * 10; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      launch();
      check(cudaStreamSynchronize(stream), "sync");
      sync_latency.push_back(host_seconds(t0, std::chrono::steady_clock::now()));
    }
    add("sync_latency", sync_latency);

    std::vector<double> host_issue, back_to_back;
    for (int s = 0; s < samples; ++s) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kBatch; ++i) launch();
      const auto t1 = std::chrono::steady_clock::now();
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      host_issue.push_back(host_seconds(t0, t1) / kBatch);
      back_to_back.push_back(ms * 1e-3 / kBatch);
    }
    add("host_issue", host_issue);
    add("back_to_back", back_to_back);

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    for (int i = 0; i < kBatch; ++i) launch();
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "graph warm-up");
    std::vector<double> graph_per_kernel;
    for (int s = 0; s < samples; ++s) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      graph_per_kernel.push_back(ms * 1e-3 / kBatch);
    }
    add("graph_per_kernel", graph_per_kernel);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);

    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    launch();
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int i = 0; i < 10; ++i) check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "graph warm-up");
    std::vector<double> graph_sync;
    for (int i = 0; i < samples * 10; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      check(cudaStreamSynchronize(stream), "sync");
      graph_sync.push_back(host_seconds(t0, std::chrono::steady_clock::now()));
    }
    add("graph_sync", graph_sync);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return out;
}

}  // namespace moetwin::gpu
