#include "moetwin/sim/workload_template_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/engine/compiled_program.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/test_support/same_prediction.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// A MoE scenario cut small: `model` with `layers` layers on `instance` x `nodes` (8 GPUs each), tp 2,
// `pp` stages (x `vpp`), ep 4, `dispatcher`, plus `training` and `routing` lines.
struct Case {
  std::string model = "qwen3-30b-a3b";
  int layers = 4;
  std::string instance = "p6-b300.48xlarge";
  int nodes = 2;
  int pp = 2;
  int vpp = 1;
  std::string training;  // extra [training] lines
  std::string routing;   // a [routing] table, or ""
  std::string label;
};

Scenario scenario(const Case& c, const std::string& dispatcher) {
  const int dp = c.nodes * 8 / (2 * c.pp);
  std::string t =
      "name = \"t\"\n[model]\nname = \"" + c.model + "\"\nlayers = " + std::to_string(c.layers) + "\n";
  t += "[cluster]\ninstance = \"" + c.instance + "\"\nnodes = " + std::to_string(c.nodes) + "\n";
  t += "[parallelism]\ntp = 2\npp = " + std::to_string(c.pp) + "\nvpp = " + std::to_string(c.vpp) +
       "\nep = 4\netp = 1\ndp = " + std::to_string(dp) + "\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(4 * c.pp * dp) +
       "\nseq_length = 2048\n" + c.training;
  t += "[dispatcher]\nname = \"" + dispatcher + "\"\n" + c.routing;
  return parse_scenario(t, "test.toml", catalog());
}

void expect_same_program(const Program& a, const Program& b) {
  ASSERT_EQ(a.size(), b.size());
  for (int i = 0; i < a.size(); ++i) {
    const OpSpec& x = a.ops()[static_cast<std::size_t>(i)];
    const OpSpec& y = b.ops()[static_cast<std::size_t>(i)];
    SCOPED_TRACE("op " + std::to_string(i));
    ASSERT_EQ(x.duration, y.duration);
    ASSERT_EQ(x.deps[0], y.deps[0]);
    ASSERT_EQ(x.deps[1], y.deps[1]);
    ASSERT_EQ(x.var_slot, y.var_slot);
    ASSERT_EQ(x.label, y.label);
    ASSERT_EQ(x.host_ns, y.host_ns);
    ASSERT_EQ(x.microbatch, y.microbatch);
    ASSERT_EQ(x.net_load, y.net_load);
    ASSERT_EQ(x.chunk, y.chunk);
    ASSERT_EQ(x.sms, y.sms);
    ASSERT_EQ(x.stream, y.stream);
    ASSERT_EQ(x.kind, y.kind);
    ASSERT_EQ(x.comm_class, y.comm_class);
    ASSERT_EQ(x.channel, y.channel);
    ASSERT_EQ(x.sync, y.sync);
    ASSERT_EQ(x.phase, y.phase);
  }
  EXPECT_EQ(a.labels(), b.labels());
  EXPECT_EQ(a.net_loads(), b.net_loads());
  EXPECT_EQ(a.streams(), b.streams());
  EXPECT_EQ(a.var_slots(), b.var_slots());
  EXPECT_EQ(a.sealed(), b.sealed());
  EXPECT_EQ(a.issue_prefix(), b.issue_prefix());
  EXPECT_EQ(a.pos_in_stream(), b.pos_in_stream());
  EXPECT_EQ(a.stream_sizes(), b.stream_sizes());
}

// The built workload field by field, and every field a command reads from a Prediction.
void expect_same(const Prediction& a, const Prediction& b, const std::string& what) {
  SCOPED_TRACE(what);
  const Workload& wa = a.built.workload;
  const Workload& wb = b.built.workload;
  ASSERT_EQ(wa.programs.size(), wb.programs.size());
  for (std::size_t p = 0; p < wa.programs.size(); ++p) {
    SCOPED_TRACE("program " + std::to_string(p));
    expect_same_program(wa.programs[p], wb.programs[p]);
  }
  // A build through a shared template hands the engine its programs' compiled forms (compiled_program.hpp,
  // kept with the template and re-set to the A2A SMs of each pricing): each equals a fresh compile of its
  // program. The plain build hands none (the engine compiles).
  EXPECT_TRUE(wa.compiled.empty());
  if (!wb.compiled.empty()) {
    ASSERT_EQ(wb.compiled.size(), wb.programs.size());
    for (std::size_t p = 0; p < wb.compiled.size(); ++p) {
      ASSERT_NE(wb.compiled[p], nullptr);
      EXPECT_TRUE(same_compiled(*wb.compiled[p], *compile_program(wb.programs[p])))
          << "compiled program " << p;
    }
  }
  EXPECT_EQ(wa.rank_program, wb.rank_program);
  EXPECT_EQ(wa.rank_channels, wb.rank_channels);
  EXPECT_EQ(wa.channel_size, wb.channel_size);
  EXPECT_EQ(wa.var_offset, wb.var_offset);
  ASSERT_EQ(wa.var_durations.size(), wb.var_durations.size());
  for (std::size_t i = 0; i < wa.var_durations.size(); ++i)
    ASSERT_EQ(wa.var_durations[i], wb.var_durations[i]) << "var duration " << i;
  EXPECT_EQ(wa.sms, wb.sms);
  EXPECT_EQ(wa.stream_names, wb.stream_names);
  test_support::expect_same_prediction(a, b);
}

std::vector<Case> cases() {
  std::vector<Case> out(5);
  out[0].training = "recompute = \"full\"\n";
  out[0].label = "qwen3 pp2 full recompute";
  out[1].instance = "p5en.48xlarge";
  out[1].label = "qwen3 on calibrated H200";
  out[2].vpp = 2;
  out[2].training = "overlap_moe_a2a = true\n";
  out[2].label = "qwen3 vpp2 A2A overlap";
  out[3].training = "recompute = \"selective\"\noverlap_grad_reduce = false\noverlap_param_gather = false\n";
  out[3].routing = "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.0\nseed = 7\n";
  out[3].label = "qwen3 zipf 1.0, no DP overlap";
  out[4].model = "deepseek-v3";
  out[4].layers = 6;
  out[4].nodes = 4;
  out[4].training = "precision = \"fp8-blockwise\"\nrecompute = \"full\"\n";
  out[4].label = "dsv3 6 layers fp8";
  return out;
}

const std::vector<std::string> kDispatchers = {"deepep-uccl", "deepep-nvshmem", "nccl-alltoall",
                                               "deepep-v2-gin"};

TEST(WorkloadTemplateCache, SharedBuildsEqualPlainOnesForEveryDispatcher) {
  const FittedProfile profile = resolve_fitted_profile("");
  for (const Case& c : cases()) {
    const auto setup = std::make_shared<const PredictionSetupCache>();
    const auto programs = std::make_shared<WorkloadTemplateCache>();
    for (const std::string& d : kDispatchers) {
      const Scenario s = scenario(c, d);
      PredictOptions plain = predict_options_for(s, profile);
      const Prediction reference = predict(s, plain);  // no set-up cache, no templates
      PredictOptions shared = predict_options_for(s, profile);
      shared.setup_cache = setup;
      shared.programs = programs;
      expect_same(reference, predict(s, shared), c.label + ", " + d);
      // The same dispatcher again: a template hit, its compiled programs the kept ones.
      const Prediction again = predict(s, shared);
      expect_same(reference, again, c.label + ", " + d + " again");
      EXPECT_EQ(again.built.workload.compiled.size(), again.built.workload.programs.size());
    }
    // deepep-uccl and deepep-nvshmem (fused permute, no NCCL counts) share one emission; nccl-alltoall
    // (permute ops, counts all-gather) emits its own, and the one after it too (capacity 1).
    EXPECT_EQ(programs->misses(), 3u) << c.label;
    EXPECT_EQ(programs->hits(), 5u) << c.label;
  }
}

TEST(WorkloadTemplateCache, TermSpreadWithTemplatesEqualsThePlainOne) {
  const FittedProfile profile = resolve_fitted_profile("");
  ASSERT_TRUE(profile.fitted) << "the shipped fitted profile";
  // deepep-v2-gin has no live runs in the shipped fit: its spread replays with each generic source.
  const Scenario s = scenario(Case{}, "deepep-v2-gin");
  const double t = predict(s, predict_options_for(s, profile)).iteration_s;
  const TermSpread plain = a2a_term_spread(s, profile, t);
  const auto setup = std::make_shared<const PredictionSetupCache>();
  const auto programs = std::make_shared<WorkloadTemplateCache>();
  PredictOptions with_caches;
  with_caches.setup_cache = setup;
  with_caches.programs = programs;
  const TermSpread shared = a2a_term_spread(s, profile, t, with_caches);
  ASSERT_GT(plain.replays, 1);
  test_support::expect_same_spread(shared, plain);
  // The generic sources differ in A2A terms only: one emission serves every replay.
  EXPECT_EQ(programs->misses(), 1u);
  EXPECT_EQ(programs->hits(), static_cast<std::size_t>(plain.replays) - 1);
}

TEST(WorkloadTemplateCache, WhatTheEmissionReadsIsPartOfTheKey) {
  const FittedProfile profile = resolve_fitted_profile("");
  const Scenario base = scenario(Case{}, "deepep-uccl");
  const auto setup = std::make_shared<const PredictionSetupCache>();
  const auto programs = std::make_shared<WorkloadTemplateCache>(8);
  const auto through_cache = [&](const Scenario& s, const SimProfile& sim) {
    PredictOptions o = predict_options_for(s, profile);
    o.profile = sim;
    o.setup_cache = setup;
    o.programs = programs;
    PredictOptions p = predict_options_for(s, profile);
    p.profile = sim;
    expect_same(predict(s, p), predict(s, o), "changed input");
  };
  through_cache(base, profile.sim);
  EXPECT_EQ(programs->misses(), 1u);
  // Each change below alters what the builder emits (host times, op structure, durations), so each
  // is a new key; the predictions still equal the plain ones.
  SimProfile launch = profile.sim;
  launch.launch_s *= 2;
  through_cache(base, launch);
  EXPECT_EQ(programs->misses(), 2u);
  SimProfile scaled = profile.sim;
  scaled.collective_time_scale *= 1.5;
  through_cache(base, scaled);
  EXPECT_EQ(programs->misses(), 3u);
  Scenario mb2 = base;
  mb2.training.micro_batch = 2;
  through_cache(mb2, profile.sim);
  EXPECT_EQ(programs->misses(), 4u);
  const Scenario nccl = scenario(Case{}, "nccl-alltoall");
  through_cache(nccl, profile.sim);
  EXPECT_EQ(programs->misses(), 5u);
  Scenario padded = nccl;  // no counts all-gather, no host sync
  padded.training.moe_pad_to_capacity = true;
  through_cache(padded, profile.sim);
  EXPECT_EQ(programs->misses(), 6u);
  // A2A terms and the network mode are priced or replayed after emission: the same key.
  SimProfile terms = profile.sim;
  terms.generic_a2a.latency_s += 1e-4;
  terms.network = NetworkMode::flow;
  through_cache(base, terms);
  EXPECT_EQ(programs->misses(), 6u);
  EXPECT_EQ(programs->hits(), 1u);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// A template larger than the cache's bound is not kept: the build prices its own emission in place (as the
// plain build), the entry the cache held stays, and every prediction equals the plain one either way.
TEST(WorkloadTemplateCache, TemplatesAboveTheBoundAreNotKept) {
  const FittedProfile profile = resolve_fitted_profile("");
  const Scenario small = scenario(Case{}, "deepep-uccl");
  Case big_case;
  big_case.layers = 8;  // twice the ops of `small` per stage
  const Scenario big = scenario(big_case, "deepep-uccl");
  const auto setup = std::make_shared<const PredictionSetupCache>();
  // A cache that keeps anything keeps it.
  const auto unbounded = std::make_shared<WorkloadTemplateCache>(1, std::size_t{1} << 40);
  const auto predict_with = [&](const Scenario& s, const std::shared_ptr<WorkloadTemplateCache>& programs) {
    PredictOptions o = predict_options_for(s, profile);
    o.setup_cache = setup;
    o.programs = programs;
    return predict(s, o);
  };
  const auto plain = [&](const Scenario& s) { return predict(s, predict_options_for(s, profile)); };
  predict_with(small, unbounded);
  EXPECT_EQ(unbounded->refused(), 0u);
  EXPECT_EQ(unbounded->misses(), 1u);
  const auto bounded = std::make_shared<WorkloadTemplateCache>(1, 1);
  predict_with(small, bounded);
  EXPECT_EQ(bounded->refused(), 1u) << "a 1-byte bound keeps nothing";
  EXPECT_FALSE(bounded->admits(2));
  EXPECT_TRUE(bounded->admits(1));

  const auto cache = std::make_shared<WorkloadTemplateCache>(1, WorkloadTemplateCache::kDefaultMaxBytes);
  EXPECT_TRUE(cache->admits(WorkloadTemplateCache::kDefaultMaxBytes));
  EXPECT_FALSE(cache->admits(WorkloadTemplateCache::kDefaultMaxBytes + 1));

  // With the 1-byte bound nothing is kept: every build misses, none hits, and the predictions equal the
  // plain ones.
  const auto none_kept = std::make_shared<WorkloadTemplateCache>(1, 1);
  for (const Scenario* s : {&small, &big, &small}) {
    expect_same(plain(*s), predict_with(*s, none_kept), "bound 1 byte");
  }
  EXPECT_EQ(none_kept->hits(), 0u);
  EXPECT_EQ(none_kept->misses(), 3u);
  EXPECT_EQ(none_kept->refused(), 3u);
}

// Sizes the bound is compared with: an emission holds at least its ops (48 bytes each), and a bound just
// below a template's size refuses it while the held entry (a smaller template) stays and keeps hitting.
TEST(WorkloadTemplateCache, TheHeldEntryStaysWhenALargerOneIsRefused) {
  const FittedProfile profile = resolve_fitted_profile("");
  const Scenario small = scenario(Case{}, "deepep-uccl");
  Case big_case;
  big_case.layers = 8;
  const Scenario big = scenario(big_case, "deepep-uccl");
  const Scenario small_again = scenario(Case{}, "deepep-nvshmem");  // the same emission as `small`
  const auto setup = std::make_shared<const PredictionSetupCache>();
  const auto predict_with = [&](const Scenario& s, const std::shared_ptr<WorkloadTemplateCache>& programs) {
    PredictOptions o = predict_options_for(s, profile);
    o.setup_cache = setup;
    o.programs = programs;
    return predict(s, o);
  };
  // The small template's size: the ops of its built programs (pricing adds no op) are a lower bound,
  // the big one's at least 1.5x (twice the layers; the embedding and head ops are fewer than the layers').
  const Prediction p_small = predict(small, predict_options_for(small, profile));
  const Prediction p_big = predict(big, predict_options_for(big, profile));
  std::size_t small_ops = 0, big_ops = 0;
  for (const Program& prog : p_small.built.workload.programs) small_ops += prog.ops().size();
  for (const Program& prog : p_big.built.workload.programs) big_ops += prog.ops().size();
  ASSERT_GT(big_ops * 2, small_ops * 3);
  // Find the small template's exact size: the smallest bound that admits it (bisection over admits()).
  std::size_t lo = small_ops * sizeof(OpSpec), hi = big_ops * sizeof(OpSpec);
  const auto kept = [&](std::size_t bound) {
    const auto c = std::make_shared<WorkloadTemplateCache>(1, bound);
    predict_with(small, c);
    return c->refused() == 0;
  };
  ASSERT_FALSE(kept(lo - 1));
  while (!kept(hi)) hi *= 2;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (kept(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const std::size_t small_bytes = lo;
  const auto cache = std::make_shared<WorkloadTemplateCache>(1, small_bytes);
  expect_same(p_small, predict_with(small, cache), "small, kept");
  expect_same(p_big, predict_with(big, cache), "big, refused");
  EXPECT_EQ(cache->refused(), 1u);
  // The small template is still held: the nvshmem build (same emission) hits it.
  expect_same(predict(small_again, predict_options_for(small_again, profile)),
              predict_with(small_again, cache), "small again, a hit");
  EXPECT_EQ(cache->hits(), 1u);
  EXPECT_EQ(cache->misses(), 2u);
}

}  // namespace
}  // namespace moetwin
