// The layer-op table (layer_ops.hpp) against the workload builder: the builder emits exactly the table's
// ops, and each op's FLOPs and bytes as emitted are the table's formula text evaluated on the model's
// shape (read off the op durations under a compute profile of 1 FLOP/ns or 1 byte/ns and a
// communication model of 1 byte/ns).
#include "moetwin/sim/layer_ops.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A GQA or MLA scenario on one p5en node (8 H200): `model` overrides the catalog model's fields.
Scenario scenario(const std::string& base, const std::string& model, const std::string& parallel,
                  const std::string& dispatcher = "nccl-alltoall") {
  const std::string t = "name = \"t\"\n[model]\nname = \"" + base + "\"\n" + model +
                        "[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 1\n[parallelism]\n" + parallel +
                        "[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 4096\n"
                        "recompute = \"selective\"\n[dispatcher]\nname = \"" +
                        dispatcher + "\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

std::set<std::string> emitted_labels(const Scenario& s) {
  const BuiltWorkload b = build_workload(s, SimProfile{});
  std::set<std::string> out;
  for (const Program& p : b.workload.programs) {
    for (const OpSpec& op : p.ops()) out.insert(p.labels()[static_cast<std::size_t>(op.label)]);
  }
  return out;
}

TEST(LayerOps, TableNamesAreUniqueAndDocumented) {
  std::set<std::string> names;
  for (const LayerOp* op : layer_op_table()) {
    EXPECT_TRUE(names.insert(op->name).second) << op->name;
    EXPECT_GE(op->launches, 1) << op->name;
    EXPECT_NE(std::string(op->bytes), "") << op->name;
    EXPECT_NE(std::string(op->source), "") << op->name;
    EXPECT_TRUE(op->dtype_bytes == 2 || op->dtype_bytes == 4 || op->dtype_bytes == 8) << op->name;
    const bool compute = op->cls == LayerOpClass::gemm || op->cls == LayerOpClass::grouped_gemm ||
                         op->cls == LayerOpClass::attention || op->cls == LayerOpClass::elementwise;
    if (!compute) {
      EXPECT_THROW(compute_class(op->cls), std::logic_error) << op->name;
    }
    EXPECT_EQ(op->gemm_calls_per_expert > 0, op->cls == LayerOpClass::grouped_gemm) << op->name;
  }
  EXPECT_EQ(find_layer_op("attn.qkv_bwd"), &layer_ops::kAttnQkvBwd);
  EXPECT_EQ(find_layer_op("attn.nothing"), nullptr);
}

// Every label the builder emits for DeepSeek-V3 (the shipped default: MLA, dense and MoE layers, shared
// experts, MTP, NCCL all-to-all) and a GQA model (MoE and, without experts, dense, with expert data
// parallelism; dense with Megatron-FSDP) is in the table, and every table entry is emitted by one of them.
TEST(LayerOps, TableIsExactlyTheOpsTheBuilderEmits) {
  const std::string source = MOETWIN_SOURCE_DIR;
  std::set<std::string> emitted =
      emitted_labels(parse_scenario(slurp(source + "/scenarios/default.toml"), "default.toml", catalog()));
  // tp 2, pp 2 and, with experts, ep 2 of dp 2: expert data parallelism 2.
  for (const auto& [overrides, ep] :
       {std::pair<std::string, int>{"layers = 4\n", 2}, {"layers = 4\nexperts = 0\n", 1}}) {
    const std::string layout =
        "tp = 2\npp = 2\nvpp = 1\nep = " + std::to_string(ep) + "\netp = 1\ncp = 1\ndp = 2\n";
    const std::set<std::string> gqa = emitted_labels(scenario("qwen3-30b-a3b", overrides, layout));
    emitted.insert(gqa.begin(), gqa.end());
  }
  // Megatron-FSDP's unit collectives (a dense model without a pipeline, DP 4).
  const std::set<std::string> fsdp = emitted_labels(parse_scenario(
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\nexperts = 0\n[cluster]\n"
      "instance = \"p5en.48xlarge\"\nnodes = 1\n[parallelism]\ntp = 2\npp = 1\nvpp = 1\nep = 1\netp = 1\n"
      "cp = 1\ndp = 4\n[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 4096\n"
      "megatron_fsdp = true\ncpu_offload_layers = 1\n",
      "test.toml", catalog()));
  emitted.insert(fsdp.begin(), fsdp.end());  // with CPU offload of one layer (its copies and waits)
  // delay_wgrad_compute: the experts' dgrad and wgrad apart in the combined 1F1B steps.
  const std::set<std::string> delayed = emitted_labels(parse_scenario(
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n[cluster]\n"
      "instance = \"p5en.48xlarge\"\nnodes = 1\n[parallelism]\ntp = 2\npp = 2\nvpp = 2\nep = 2\netp = 1\n"
      "cp = 1\ndp = 2\n[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\n"
      "overlap_moe_a2a = true\ndelay_wgrad_compute = true\n",
      "test.toml", catalog()));
  emitted.insert(delayed.begin(), delayed.end());
  std::set<std::string> table;
  for (const LayerOp* op : layer_op_table()) table.insert(op->name);
  for (const std::string& l : emitted)
    EXPECT_TRUE(table.count(l) == 1) << l << " is emitted but not in the table";
  for (const std::string& l : table)
    EXPECT_TRUE(emitted.count(l) == 1) << l << " is in the table but never emitted";
}

// Evaluates a formula of the table: numbers, symbols, + - / ^, parentheses, juxtaposition multiplies.
class Formula {
 public:
  Formula(std::string text, const std::map<std::string, double>& symbols)
      : s_(std::move(text)), sym_(symbols) {}
  double value() {
    const double v = expr();
    skip();
    if (i_ != s_.size()) throw std::runtime_error("trailing text in '" + s_ + "'");
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool at(char c) {
    skip();
    return i_ < s_.size() && s_[i_] == c;
  }
  double expr() {
    double v = term();
    while (at('+') || at('-')) v = s_[i_++] == '+' ? v + term() : v - term();
    return v;
  }
  double term() {
    double v = power();
    while (true) {
      if (at('/')) {
        ++i_;
        v /= power();
      } else if (at('(') || (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_])))) {
        v *= power();
      } else {
        return v;
      }
    }
  }
  double power() {
    const double base = primary();
    if (!at('^')) return base;
    ++i_;
    return std::pow(base, primary());
  }
  double primary() {
    skip();
    if (at('(')) {
      ++i_;
      const double v = expr();
      if (!at(')')) throw std::runtime_error("unbalanced '" + s_ + "'");
      ++i_;
      return v;
    }
    const std::size_t start = i_;
    if (std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
      return std::stod(s_.substr(start, i_ - start));
    }
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    const std::string name = s_.substr(start, i_ - start);
    const auto it = sym_.find(name);
    if (it == sym_.end()) throw std::runtime_error("unknown symbol '" + name + "' in '" + s_ + "'");
    return it->second;
  }

  std::string s_;
  const std::map<std::string, double>& sym_;
  std::size_t i_ = 0;
};

// One byte per ns for every collective: an op's duration is its bytes.
class BytesComm : public CommCostModel {
 public:
  std::string name() const override { return "bytes"; }
  double seconds(CollectiveOp, double bytes, const std::vector<int>&) const override { return bytes * 1e-9; }
};

// 1 FLOP/ns (HBM too fast to matter) or 1 byte/ns (peak too high to matter); efficiencies 0.5, below the
// cap a fitted scale applies.
ComputeProfile unit_profile(const Scenario& s, bool bytes) {
  ComputeProfile cp = ComputeProfile::from_gpu(s.gpu);
  cp.calibration.reset();
  cp.fp8_calibration.reset();
  for (double& e : cp.efficiency) e = 0.5;
  cp.min_kernel_s = 0;
  cp.peak_flops = bytes ? 1e30 : 2e9;
  cp.hbm_bandwidth = bytes ? 2e9 : 1e30;
  return cp;
}

// The first forward-or-backward duration of each op (compute and collective) on rank 0's program.
std::map<std::string, double> first_durations(const Scenario& s, bool bytes) {
  const ComputeProfile cp = unit_profile(s, bytes);
  WorkloadSeams seams;
  seams.compute = &cp;
  seams.comm = std::make_shared<BytesComm>();
  const BuiltWorkload b = build_workload(s, SimProfile{}, seams);
  const Program& p = b.workload.programs.front();
  std::map<std::string, double> out;
  for (const OpSpec& op : p.ops()) {
    if (op.var_slot >= 0) continue;
    out.emplace(p.labels()[static_cast<std::size_t>(op.label)], static_cast<double>(op.duration));
  }
  return out;
}

// Checks every op of the table emitted on rank 0 without a per-rank duration: compute ops' FLOPs
// (unit FLOP profile) and bytes (unit byte profile), collectives' bytes. Returns the ops checked.
std::set<std::string> check_formulas(const Scenario& s, const std::map<std::string, double>& symbols) {
  const std::map<std::string, double> flops = first_durations(s, false);
  const std::map<std::string, double> bytes = first_durations(s, true);
  std::set<std::string> checked;
  for (const LayerOp* op : layer_op_table()) {
    const auto f = flops.find(op->name);
    // DP collectives and the optimizer step are not checked here: their formulas count parameters.
    if (f == flops.end() || op->phase == OpPhase::optimizer) continue;
    const bool compute = op->cls != LayerOpClass::collective;
    if (compute && std::string(op->flops) != "0") {
      EXPECT_NEAR(f->second, Formula(op->flops, symbols).value(), 1.0) << op->name << " FLOPs " << op->flops;
    }
    const double b = compute ? bytes.at(op->name) : f->second;
    // A GEMM's time is the larger of its compute and memory terms: with a 1 byte/ns HBM and 1e30 FLOP/s
    // it is its bytes.
    EXPECT_NEAR(b, Formula(op->bytes, symbols).value(), 1.0) << op->name << " bytes " << op->bytes;
    checked.insert(op->name);
  }
  return checked;
}

// A tiny GQA model, dense and MoE, tp 2, 4096 tokens: hand-computed values from the table's text
// first, then every op's formula evaluated.
TEST(LayerOps, GqaFormulasMatchTheBuilder) {
  const std::string model =
      "layers = 2\nhidden = 1024\nheads = 8\nquery_groups = 2\nhead_dim = 128\nffn_hidden = 4096\n"
      "vocab = 32768\nmtp_layers = 0\n";
  const std::string layout = "tp = 2\npp = 1\nvpp = 1\nep = 1\netp = 1\ncp = 1\ndp = 4\n";
  const Scenario dense = scenario("qwen3-30b-a3b", model + "experts = 0\n", layout);
  const std::map<std::string, double> flops = first_durations(dense, false);
  // T = 4096, t = 2, h = 1024, q = v = 8 x 128 = 1024, kv = 2 x 128 = 256, f = 4096, V = 32768, s = 4096.
  EXPECT_EQ(flops.at("attn.qkv"), 2.0 * 4096 * 1024 * (1024 + 2 * 256) / 2);      // 2 T h (q + 2 kv) / t
  EXPECT_EQ(flops.at("attn.qkv_bwd"), 4.0 * 4096 * 1024 * (1024 + 2 * 256) / 2);  // 4 T h (q + 2 kv) / t
  EXPECT_EQ(flops.at("attn.core"), 1.0 * 4096 * 4096 * (1024 + 1024) / 2);        // b s^2 (q + v) / t
  EXPECT_EQ(flops.at("attn.core_bwd"), 2.5 * 4096 * 4096 * (1024 + 1024) / 2);    // a b s^2 (q + v) / t
  EXPECT_EQ(flops.at("mlp.dense"), 6.0 * 4096 * 1024 * 4096 / 2);                 // 6 T h f / t
  EXPECT_EQ(flops.at("output_layer"), 2.0 * 4096 * 1024 * 32768 / 2);             // 2 T h V / t
  const std::map<std::string, double> bytes = first_durations(dense, true);
  EXPECT_EQ(bytes.at("loss.cross_entropy"), 12.0 * 4096 * 32768 / 2);  // 12 T V / t
  EXPECT_EQ(bytes.at("embedding"), 4.0 * 4096 * 1024);                 // 4 T h
  EXPECT_EQ(bytes.at("tp.ag.attn"), 2.0 * 4096 * 1024);                // 2 T h

  std::map<std::string, double> sym = {{"T", 4096},
                                       {"t", 2},
                                       {"b", 1},
                                       {"s", 4096},
                                       {"h", 1024},
                                       {"f", 4096},
                                       {"q", 1024},
                                       {"v", 1024},
                                       {"kv", 256},
                                       {"V", 32768},
                                       {"a", SimProfile{}.attention_backward_factor}};
  std::set<std::string> checked = check_formulas(dense, sym);
  // MoE: 8 experts of top-2 on ep 2 (the router; expert GEMMs and A2As are per-rank var ops).
  sym["E"] = 8;
  sym["ep"] = 2;
  sym["etp"] = 1;
  const Scenario moe = scenario("qwen3-30b-a3b", model + "experts = 8\ntop_k = 2\nexpert_ffn_hidden = 512\n",
                                "tp = 2\npp = 1\nvpp = 1\nep = 2\netp = 1\ncp = 1\ndp = 4\n");
  EXPECT_EQ(first_durations(moe, false).at("moe.router"), 2.0 * 2048 * 1024 * 8);  // 2 (T / t) h E
  const std::set<std::string> moe_checked = check_formulas(moe, sym);
  checked.insert(moe_checked.begin(), moe_checked.end());
  for (const char* op : {"attn.qkv",           "attn.qkv_bwd",           "attn.core",
                         "attn.core_bwd",      "attn.out_proj",          "attn.out_proj_bwd",
                         "mlp.dense",          "mlp.dense_bwd",          "moe.router",
                         "moe.router_bwd",     "ep.counts_allgather",    "embedding",
                         "embedding_bwd",      "output_layer",           "output_layer_bwd",
                         "loss.cross_entropy", "loss.cross_entropy_bwd", "tp.ar.cross_entropy",
                         "tp.ag.attn",         "tp.rs.mlp_bwd"})
    EXPECT_EQ(checked.count(op), 1u) << op << " not checked";
}

// A tiny MLA model with shared experts and an MTP layer.
TEST(LayerOps, MlaAndMtpFormulasMatchTheBuilder) {
  const std::string model =
      "layers = 2\ndense_layers = 1\nhidden = 1024\nheads = 8\nq_lora_rank = 256\nkv_lora_rank = 128\n"
      "qk_head_dim = 64\nqk_rope_dim = 32\nv_head_dim = 64\nffn_hidden = 4096\nexperts = 8\ntop_k = 2\n"
      "expert_ffn_hidden = 512\nshared_ffn_hidden = 512\nvocab = 32768\nmtp_layers = 1\n";
  const Scenario s =
      scenario("deepseek-v3", model, "tp = 2\npp = 1\nvpp = 1\nep = 2\netp = 1\ncp = 1\ndp = 4\n");
  // q = 8 x (64 + 32), v = kn = 8 x 64, d = 256 + 128 + 32, u = 256 q + 128 x 8 x (64 + 64).
  const std::map<std::string, double> sym = {{"T", 4096},
                                             {"t", 2},
                                             {"b", 1},
                                             {"s", 4096},
                                             {"h", 1024},
                                             {"f", 4096},
                                             {"fs", 512},
                                             {"q", 768},
                                             {"v", 512},
                                             {"kn", 512},
                                             {"d", 416},
                                             {"u", 327680},
                                             {"V", 32768},
                                             {"E", 8},
                                             {"ep", 2},
                                             {"etp", 1},
                                             {"a", SimProfile{}.attention_backward_factor}};
  EXPECT_EQ(first_durations(s, false).at("attn.mla_up"), 2.0 * 4096 * 327680 / 2);  // 2 T u / t
  const std::set<std::string> checked = check_formulas(s, sym);
  for (const char* op :
       {"attn.mla_down", "attn.mla_up", "attn.mla_down_bwd", "attn.mla_up_bwd", "tp.ag.mla_latent",
        "tp.rs.mla_latent_bwd", "moe.shared_expert", "moe.shared_expert_bwd", "mtp.eh_proj",
        "mtp.eh_proj_bwd", "tp.ag.mtp_eh", "tp.rs.mtp_eh_bwd"})
    EXPECT_EQ(checked.count(op), 1u) << op << " not checked";
}

}  // namespace
}  // namespace moetwin
