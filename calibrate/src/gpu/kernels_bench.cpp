// MoE kernel calibration (kernels_bench.hpp).
#include "kernels_bench.hpp"

#include <iostream>
#include <vector>

#include "gpu_common.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/kernels/moe_kernels.hpp"

namespace moetwin::gpu {

namespace {

Experiment record(const std::string& name, const std::string& op, std::map<std::string, double> params,
                  std::vector<double> samples) {
  Experiment e;
  e.name = "kernel." + name;
  e.kind = "kernel";
  // Not = "s": GCC 12 -O3 flags assigning a one-character literal (-Wrestrict false positive, GCC bug
  // 105329).
  e.unit = std::string("s");
  e.params = std::move(params);
  e.labels = {{"op", op}, {"dtype", "bf16"}};
  e.samples = std::move(samples);
  const double med = e.stats().median;
  std::cout << e.name << ": " << format_fixed(med * 1e6, 2) << " us";
  if (e.params.count("bytes_moved") != 0) {
    std::cout << ", " << format_fixed(e.params.at("bytes_moved") / med / 1e9, 1) << " GB/s";
  }
  std::cout << '\n';
  return e;
}

}  // namespace

std::vector<Experiment> run_kernel_bench(const KernelBenchOptions& o) {
  require_gpu();
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  TimingOptions timing;
  timing.samples = o.samples;
  std::vector<Experiment> out;
  const int topk = 8;
  const std::vector<int> token_counts =
      o.quick ? std::vector<int>{8192} : std::vector<int>{2048, 8192, 16384};
  for (const int tokens : token_counts) {
    for (const int hidden : {2048, 4096, 7168}) {
      const int rows = tokens * topk;
      const auto row_bytes = static_cast<double>(hidden) * 2;
      DeviceMemory x(static_cast<std::size_t>(tokens) * hidden * 2);
      DeviceMemory perm(static_cast<std::size_t>(rows) * hidden * 2);
      DeviceMemory y(static_cast<std::size_t>(tokens) * hidden * 2);
      DeviceMemory r2t(static_cast<std::size_t>(rows) * 4), t2r(static_cast<std::size_t>(rows) * 4);
      DeviceMemory w(static_cast<std::size_t>(rows) * 4);
      // Routing map: row r holds token (r * p) % tokens with p = 1000003 (prime, coprime to every
      // token count here): a scattered but exact permutation, each token in `topk` rows.
      std::vector<std::int32_t> h_r2t(static_cast<std::size_t>(rows)), h_t2r(static_cast<std::size_t>(rows));
      std::vector<int> fill(static_cast<std::size_t>(tokens), 0);
      for (int r = 0; r < rows; ++r) {
        const auto t = static_cast<int>((static_cast<long long>(r) * 1000003LL) % tokens);
        h_r2t[static_cast<std::size_t>(r)] = t;
        h_t2r[static_cast<std::size_t>(t) * topk +
              static_cast<std::size_t>(fill[static_cast<std::size_t>(t)]++)] = r;
      }
      check(cudaMemcpy(r2t.get(), h_r2t.data(), h_r2t.size() * 4, cudaMemcpyHostToDevice), "copy map");
      check(cudaMemcpy(t2r.get(), h_t2r.data(), h_t2r.size() * 4, cudaMemcpyHostToDevice), "copy map");
      fill_bf16(x.get(), static_cast<std::size_t>(tokens) * hidden, 3, stream);
      fill_f32(w.as<float>(), static_cast<std::size_t>(rows), 4, 0.0f, 0.25f, stream);
      const std::string tag = ".t" + std::to_string(tokens) + ".h" + std::to_string(hidden);
      const double perm_bytes = static_cast<double>(rows) * row_bytes;
      std::map<std::string, double> p = {{"tokens", tokens}, {"hidden", hidden}, {"topk", topk}};
      // Reference: copying the permuted activation (rows x hidden) once, read + write counted.
      auto pc = p;
      pc["bytes_moved"] = 2 * perm_bytes;
      DeviceMemory copy_src(static_cast<std::size_t>(perm_bytes));
      out.push_back(record("d2d_copy" + tag, "d2d_copy", pc,
                           time_launches(
                               [&] {
                                 check(cudaMemcpyAsync(perm.get(), copy_src.get(),
                                                       static_cast<std::size_t>(perm_bytes),
                                                       cudaMemcpyDeviceToDevice, stream),
                                       "cudaMemcpyAsync");
                               },
                               stream, timing)));
      auto pp = p;
      pp["bytes_moved"] = 2 * perm_bytes + rows * 4.0;
      out.push_back(record("permute" + tag, "permute", pp,
                           time_launches(
                               [&] {
                                 check(kernels::permute(x.as<std::uint16_t>(), r2t.as<std::int32_t>(), rows,
                                                        hidden, perm.as<std::uint16_t>(), stream),
                                       "permute");
                               },
                               stream, timing)));
      auto pu = p;
      pu["bytes_moved"] = perm_bytes + static_cast<double>(tokens) * row_bytes + rows * 8.0;
      out.push_back(record("unpermute" + tag, "unpermute", pu,
                           time_launches(
                               [&] {
                                 check(kernels::unpermute(perm.as<std::uint16_t>(), t2r.as<std::int32_t>(),
                                                          w.as<float>(), tokens, topk, hidden,
                                                          y.as<std::uint16_t>(), stream),
                                       "unpermute");
                               },
                               stream, timing)));
    }
    // Router configurations of the catalog models (experts, groups, kept groups, top-k, score).
    struct RouterCase {
      const char* name;
      kernels::RouterConfig config;
    };
    const auto make = [](int experts, int groups, int topk_groups, int k, bool sigmoid) {
      kernels::RouterConfig c;
      c.experts = experts;
      c.groups = groups;
      c.topk_groups = topk_groups;
      c.topk = k;
      c.sigmoid = sigmoid;
      c.normalize = sigmoid;
      return c;
    };
    for (const RouterCase& rc :
         {RouterCase{"deepseek-v3", make(256, 8, 4, 8, true)},
          RouterCase{"kimi-k2", make(384, 1, 1, 8, true)}, RouterCase{"qwen3", make(128, 1, 1, 8, false)}}) {
      const std::size_t n = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(rc.config.experts);
      DeviceMemory logits(n * 4), bias(static_cast<std::size_t>(rc.config.experts) * 4);
      DeviceMemory ex(static_cast<std::size_t>(tokens) * 16 * 4),
          wt(static_cast<std::size_t>(tokens) * 16 * 4);
      fill_f32(logits.as<float>(), n, 5, -4.0f, 4.0f, stream);
      fill_f32(bias.as<float>(), static_cast<std::size_t>(rc.config.experts), 6, 0.0f, 0.1f, stream);
      std::map<std::string, double> p = {
          {"tokens", tokens},
          {"experts", rc.config.experts},
          {"groups", rc.config.groups},
          {"topk", rc.config.topk},
          {"bytes_moved", static_cast<double>(n) * 4 + tokens * rc.config.topk * 8.0}};
      out.push_back(record(std::string("router.") + rc.name + ".t" + std::to_string(tokens), "router", p,
                           time_launches(
                               [&] {
                                 check(kernels::router_topk(logits.as<float>(), bias.as<float>(), tokens,
                                                            rc.config, ex.as<std::int32_t>(), wt.as<float>(),
                                                            stream),
                                       "router");
                               },
                               stream, timing)));
    }
  }
  cudaStreamDestroy(stream);
  return out;
}

}  // namespace moetwin::gpu
