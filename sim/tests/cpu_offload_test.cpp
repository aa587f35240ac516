// CPU offload of activations (cpu_offload.hpp): Transformer Engine's window map and the memory peak by hand,
// a layer's copy priced by hand over the catalog's PCIe Gen5 x16 rate, the copies hidden under the later
// layers' compute (the iteration unchanged) and exposed where they cannot hide (the iteration grows by
// exactly each copy's excess over the compute it overlaps), and the scenario rules.
#include "moetwin/sim/cpu_offload.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return c;
}

// Llama 3 8B cut to 4 layers on one DGX B200 (TP1 DP8, one microbatch of 8192 tokens), `offload` layers
// offloaded; DP collectives after the backward (not overlapped), so a layer's wall time is its kernels'.
std::string text(int offload, const std::string& training_extra = "", int pp = 1) {
  return "name = \"t\"\n[model]\nname = \"llama3-8b\"\nlayers = 4\ndense_layers = 4\n[cluster]\n"
         "instance = \"dgx-b200\"\nnodes = 1\n[parallelism]\ntp = 1\npp = " +
         std::to_string(pp) + "\nvpp = 1\nep = 1\netp = 1\ncp = 1\ndp = " + std::to_string(8 / pp) +
         "\n[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(8 / pp) +
         "\nseq_length = 8192\noverlap_grad_reduce = false\noverlap_param_gather = false\n"
         "cpu_offload_layers = " +
         std::to_string(offload) + "\n" + training_extra;
}
Scenario llama(int offload) {
  return parse_scenario(text(offload), "test.toml", catalog());
}

// No host time: kernels back to back, so the iteration is device time alone.
SimProfile no_host() {
  SimProfile p;
  p.launch_s = 0;
  p.backward_launch_s = 0;
  p.grouped_gemm_launch_s = 0;
  return p;
}

const Program& program(const BuiltWorkload& b) {
  return b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
}

std::vector<int> ops_labelled(const Program& prog, const std::string& label) {
  std::vector<int> out;
  for (int i = 0; i < prog.size(); ++i) {
    const OpSpec& op = prog.ops()[static_cast<std::size_t>(i)];
    if (prog.labels().at(static_cast<std::size_t>(op.label)) == label) out.push_back(i);
  }
  return out;
}

TEST(CpuOffload, WindowMapByHand) {
  EXPECT_EQ(offload_window_map(4, 2), (std::vector<int>{1, 3}));
  EXPECT_EQ(offload_window_map(10, 3), (std::vector<int>{3, 6, 9}));  // 10 / 3 = 3, one left: +1 each
  const std::vector<int> w = offload_window_map(80, 60);              // 80 / 60 = 1, 20 left
  EXPECT_EQ(w[0], 1);
  EXPECT_EQ(w[19], 39);
  EXPECT_EQ(w[20], 40);
  EXPECT_EQ(w[59], 79);
  EXPECT_TRUE(offload_window_map(80, 0).empty());
}

TEST(CpuOffload, MemoryPeakIsTheWindowsNotTheSum) {
  // 4 equal layers, 2 offloaded (w = 1, 3): forward holds 1, 2, (layer 0 freed) 2, 3; backward keeps layers
  // 2 and 3 plus one reload: 3 of 4.
  EXPECT_DOUBLE_EQ(offload_peak_bytes({1, 1, 1, 1}, 2), 3.0);
  // Llama 3 70B's 80 layers, 40 offloaded (NVIDIA's GB200 FP8 recipe): L - N + 1 = 41 layers held.
  EXPECT_DOUBLE_EQ(offload_peak_bytes(std::vector<double>(80, 1.0), 40), 41.0);
  EXPECT_DOUBLE_EQ(offload_peak_bytes({1, 2, 3}, 0), 6.0);
  const Scenario on = llama(2), off = llama(0);
  const MemoryEstimate a = estimate_memory(on, make_pipeline_layout(on.model, on.parallel, {"t", 0}));
  const MemoryEstimate b = estimate_memory(off, make_pipeline_layout(off.model, off.parallel, {"t", 0}));
  const double layer = layer_activation_bytes(on.model, false, on.parallel, 1, 8192, Recompute::none).total();
  EXPECT_NEAR(b.stages.front().activations - a.stages.front().activations, layer, 1.0);
}

TEST(CpuOffload, ACopyIsTheLayersActivationsOverTheHostLink) {
  const BuiltWorkload b = build_workload(llama(2), no_host());
  const Program& prog = program(b);
  const std::vector<int> d2h = ops_labelled(prog, "offload.d2h"), h2d = ops_labelled(prog, "offload.h2d");
  ASSERT_EQ(d2h.size(), 2u);
  ASSERT_EQ(h2d.size(), 2u);
  EXPECT_EQ(ops_labelled(prog, "offload.wait").size(), 4u);  // two in forward, two in backward
  // A Llama 3 8B layer at 8192 tokens, TP1 (memory model): attention 2 B x 8192 x (2 x 4096 + 4096 + 2 x
  // 1024 + 4096) = 301,989,888 B + softmax statistics 4 B x 32 x 8192 = 1,048,576 B; MLP 2 B x 8192 x
  // (2 x 4096 + 3 x 14336) = 838,860,800 B: 1,141,899,264 B over PCIe Gen5 x16 at 63.0 GB/s = 18,125,385.1
  // ns.
  for (int i : d2h)
    EXPECT_NEAR(static_cast<double>(prog.ops()[static_cast<std::size_t>(i)].duration), 18'125'385, 1);
  for (int i : h2d) EXPECT_EQ(prog.ops()[static_cast<std::size_t>(i)].stream, 7);  // kStreamOffload
  EXPECT_EQ(prog.ops()[static_cast<std::size_t>(d2h[0])].kind, OpKind::comm);
  EXPECT_EQ(prog.ops()[static_cast<std::size_t>(d2h[0])].sms, 0);  // copy engines, no SMs
}

// Device time of the compute-stream ops between a copy's issue point and the wait for it.
TimeNs window_compute(const Program& prog, int copy, int wait) {
  TimeNs sum = 0;
  const int from = prog.ops()[static_cast<std::size_t>(copy)].deps[0];
  for (int i = from + 1; i < wait; ++i) {
    const OpSpec& op = prog.ops()[static_cast<std::size_t>(i)];
    if (op.stream == 0) sum += op.duration;
  }
  return sum;
}

TEST(CpuOffload, HiddenUnderLaterLayersAndExposedWhereTheyCannotHide) {
  const TimeNs none = run_engine(build_workload(llama(0), no_host()).workload).iteration;
  // Hidden: a host link fast enough that every copy ends before the compute stream waits for it.
  Scenario fast = llama(2);
  fast.instance.host_link_bandwidth = 1e15;  // 1.1 us a layer
  EXPECT_EQ(run_engine(build_workload(fast, no_host()).workload).iteration, none);
  // Exposed: a 1 GB/s link (1.14 s a layer, far above a layer's ~10 ms of kernels): each copy adds its excess
  // over the compute between its issue and the wait for it (forward: d2h 0 under layer 1, d2h 1 under layers
  // 2-3; backward: h2d 1 under layers 3-2, h2d 0 under layer 1).
  Scenario slow = llama(2);
  slow.instance.host_link_bandwidth = 1e9;
  const BuiltWorkload b = build_workload(slow, no_host());
  const Program& prog = program(b);
  const std::vector<int> d2h = ops_labelled(prog, "offload.d2h"), h2d = ops_labelled(prog, "offload.h2d");
  const std::vector<int> wait = ops_labelled(prog, "offload.wait");
  ASSERT_EQ(wait.size(), 4u);
  const std::vector<std::pair<int, int>> windows = {
      {d2h[0], wait[0]}, {d2h[1], wait[1]}, {h2d[0], wait[2]}, {h2d[1], wait[3]}};
  TimeNs excess = 0;
  for (const auto& [copy, w] : windows) {
    const TimeNs c = prog.ops()[static_cast<std::size_t>(copy)].duration;
    EXPECT_EQ(c, 1'141'899'264);  // ns at 1 B/ns
    excess += c - window_compute(prog, copy, w);
  }
  EXPECT_EQ(run_engine(b.workload).iteration - none, excess);
}

TEST(CpuOffload, RulesNameTheKeyAndWhatIsExpected) {
  const auto refused = [](const std::string& t, const std::string& words) {
    try {
      (void)parse_scenario(t, "test.toml", catalog());
      ADD_FAILURE() << "accepted: " << words;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("training.cpu_offload_layers"), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  refused(text(4), "0 .. 3");
  refused(text(1, "", 2), "without a pipeline");
  refused(text(1, "recompute = \"full\"\n"), "recomputed activations");
  refused(text(1, "cuda_graphs = \"te-scoped\"\n"), "CUDA graphs");
  EXPECT_NO_THROW((void)llama(3));
}

}  // namespace
}  // namespace moetwin
