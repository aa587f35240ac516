// NCCL calibration (nccl_bench.hpp).
#include "nccl_bench.hpp"

#include <dlfcn.h>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define MOETWIN_HAVE_NCCL_HEADER 1
#endif

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "gpu_common.hpp"
#include "moetwin/calibrate/no_device_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::gpu {

#ifdef MOETWIN_HAVE_NCCL_HEADER
namespace {

// The NCCL entry points we use, resolved from libnccl.so.2.
struct Nccl {
  void* lib = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclCommInitAll) init_all = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;

  Nccl() {
    lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      throw NoDeviceError(std::string("NCCL not found (libnccl.so.2; set LD_LIBRARY_PATH): ") + dlerror());
    }
    resolve(get_version, "ncclGetVersion");
    resolve(init_all, "ncclCommInitAll");
    resolve(destroy, "ncclCommDestroy");
    resolve(error_string, "ncclGetErrorString");
    resolve(all_reduce, "ncclAllReduce");
    resolve(reduce_scatter, "ncclReduceScatter");
    resolve(all_gather, "ncclAllGather");
    resolve(send, "ncclSend");
    resolve(recv, "ncclRecv");
    resolve(group_start, "ncclGroupStart");
    resolve(group_end, "ncclGroupEnd");
  }
  ~Nccl() {
    if (lib != nullptr) dlclose(lib);
  }
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  template <typename F>
  void resolve(F& f, const char* name) {
    void* symbol = dlsym(lib, name);
    if (symbol == nullptr) throw NoDeviceError(std::string("NCCL library lacks ") + name);
    f = reinterpret_cast<F>(symbol);
  }
  void check(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + error_string(r));
  }
};

}  // namespace

std::vector<Experiment> run_nccl_bench(const NcclBenchOptions& o, std::string& nccl_version) {
  const int visible = require_gpu();
  const Nccl nccl;
  int version = 0;
  nccl.check(nccl.get_version(&version), "ncclGetVersion");
  // NCCL >= 2.9 encodes 10000 * major + 100 * minor + patch.
  nccl_version = std::to_string(version / 10000) + "." + std::to_string((version / 100) % 100) + "." +
                 std::to_string(version % 100);
  const int max_gpus = o.max_gpus > 0 ? std::min(o.max_gpus, visible) : visible;
  std::vector<int> counts;
  for (int n = 1; n <= max_gpus; n *= 2) counts.push_back(n);
  if (counts.back() != max_gpus) counts.push_back(max_gpus);

  std::vector<Experiment> out;
  const char* ops[] = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv"};
  for (const int n : counts) {
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    std::vector<int> devs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) devs[static_cast<std::size_t>(i)] = i;
    nccl.check(nccl.init_all(comms.data(), n, devs.data()), "ncclCommInitAll");
    struct Rank {
      cudaStream_t stream = nullptr;
      void* send = nullptr;
      void* recv = nullptr;
      cudaEvent_t start = nullptr, stop = nullptr;
    };
    std::vector<Rank> ranks(static_cast<std::size_t>(n));
    // Buffers: max_bytes in, max_bytes out (all_gather's output is max_bytes in total).
    for (int i = 0; i < n; ++i) {
      Rank& r = ranks[static_cast<std::size_t>(i)];
      check(cudaSetDevice(i), "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaMalloc(&r.send, o.max_bytes), "cudaMalloc");
      check(cudaMalloc(&r.recv, o.max_bytes), "cudaMalloc");
      check(cudaMemset(r.send, 0, o.max_bytes), "cudaMemset");
      check(cudaEventCreate(&r.start), "cudaEventCreate");
      check(cudaEventCreate(&r.stop), "cudaEventCreate");
    }
    for (const char* op : ops) {
      const std::string name = op;
      if ((name == "all_to_all" || name == "send_recv") && n < 2) continue;  // no peers
      for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes;
           bytes *= static_cast<std::size_t>(o.factor)) {
        const std::size_t elems = bytes / 2;  // bf16
        if (elems % static_cast<std::size_t>(n) != 0) continue;
        const std::size_t chunk = elems / static_cast<std::size_t>(n);
        const auto launch = [&] {
          nccl.check(nccl.group_start(), "ncclGroupStart");
          for (int i = 0; i < n; ++i) {
            Rank& r = ranks[static_cast<std::size_t>(i)];
            ncclComm_t c = comms[static_cast<std::size_t>(i)];
            if (name == "all_reduce") {
              nccl.check(nccl.all_reduce(r.send, r.recv, elems, ncclBfloat16, ncclSum, c, r.stream), op);
            } else if (name == "reduce_scatter") {
              nccl.check(nccl.reduce_scatter(r.send, r.recv, chunk, ncclBfloat16, ncclSum, c, r.stream), op);
            } else if (name == "all_gather") {
              nccl.check(nccl.all_gather(r.send, r.recv, chunk, ncclBfloat16, c, r.stream), op);
            } else if (name == "all_to_all") {
              for (int p = 0; p < n; ++p) {
                char* s = static_cast<char*>(r.send) + static_cast<std::size_t>(p) * chunk * 2;
                char* d = static_cast<char*>(r.recv) + static_cast<std::size_t>(p) * chunk * 2;
                nccl.check(nccl.send(s, chunk, ncclBfloat16, p, c, r.stream), op);
                nccl.check(nccl.recv(d, chunk, ncclBfloat16, p, c, r.stream), op);
              }
            } else {
              nccl.check(nccl.send(r.send, elems, ncclBfloat16, (i + 1) % n, c, r.stream), op);
              nccl.check(nccl.recv(r.recv, elems, ncclBfloat16, (i + n - 1) % n, c, r.stream), op);
            }
          }
          nccl.check(nccl.group_end(), "ncclGroupEnd");
        };
        const auto sync_all = [&] {
          for (int i = 0; i < n; ++i)
            check(cudaStreamSynchronize(ranks[static_cast<std::size_t>(i)].stream), op);
        };
        for (int w = 0; w < 5; ++w) launch();
        sync_all();
        // Repetitions per sample: enough to fill ~1 ms at the large sizes, at least 1.
        const int reps = bytes <= (1U << 20) ? 20 : bytes <= (64U << 20) ? 5 : 1;
        Experiment e;
        e.name = "nccl." + name + ".n" + std::to_string(n) + "." + std::to_string(bytes);
        e.kind = "nccl";
        e.unit = "s";
        e.labels = {{"op", name}, {"dtype", "bf16"}};
        e.params = {{"bytes", static_cast<double>(bytes)}, {"ranks", n}, {"reps", reps}};
        for (int s = 0; s < o.samples; ++s) {
          for (int i = 0; i < n; ++i) {
            check(cudaSetDevice(i), "cudaSetDevice");
            check(cudaEventRecord(ranks[static_cast<std::size_t>(i)].start,
                                  ranks[static_cast<std::size_t>(i)].stream),
                  "cudaEventRecord");
          }
          for (int rep = 0; rep < reps; ++rep) launch();
          double slowest = 0;
          for (int i = 0; i < n; ++i) {
            Rank& r = ranks[static_cast<std::size_t>(i)];
            check(cudaSetDevice(i), "cudaSetDevice");
            check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord");
            check(cudaEventSynchronize(r.stop), "cudaEventSynchronize");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
            slowest = std::max(slowest, ms * 1e-3 / reps);
          }
          e.samples.push_back(slowest);
        }
        std::cout << e.name << ": " << format_fixed(e.stats().median * 1e6, 2) << " us\n";
        out.push_back(std::move(e));
      }
    }
    for (int i = 0; i < n; ++i) {
      Rank& r = ranks[static_cast<std::size_t>(i)];
      cudaSetDevice(i);
      cudaFree(r.send);
      cudaFree(r.recv);
      cudaEventDestroy(r.start);
      cudaEventDestroy(r.stop);
      cudaStreamDestroy(r.stream);
      nccl.destroy(comms[static_cast<std::size_t>(i)]);
    }
    check(cudaSetDevice(0), "cudaSetDevice");
  }
  return out;
}

#else
// Toolkits without nccl.h (NCCL not installed at build time): the sweep reports no NCCL.
std::vector<Experiment> run_nccl_bench(const NcclBenchOptions&, std::string&) {
  throw NoDeviceError("this moetwin-calibrate was built without nccl.h");
}
#endif

}  // namespace moetwin::gpu
