#include "moetwin/sim/fitted_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

FittedProfile sample() {
  FittedProfile p;
  p.fitted = true;
  p.fitted_at = "2026-11-29";
  p.fitted_on = "validate/data/live-runs.csv";
  p.git_revision = "abc";
  p.cv_scheme = "leave-one-campaign-out";
  p.fit_objective = "huber 0.1";
  p.sim.network = NetworkMode::flow;
  set_free_parameter(p.sim, "launch_s", 3.25e-05);
  set_free_parameter(p.sim, "a2a_time_scale", 1.25);
  set_free_parameter(p.sim, "deepep-uccl.a2a_latency_s", 1.5e-3);
  set_free_parameter(p.sim, "deepep-uccl.a2a_per_copy_s", 2.5e-8);
  set_free_parameter(p.sim, "deepep-uccl.a2a_fill_tokens", 192.5);
  set_free_parameter(p.sim, "deepep-uccl.a2a_node_latency_s", 7.5e-4);
  set_free_parameter(p.sim, "deepep-uccl.a2a_remote_token_s", 1.25e-7);
  set_free_parameter(p.sim, "layer_host_s", 1.25e-3);
  p.fitted_keys = {"launch_s",
                   "a2a_time_scale",
                   "deepep-uccl.a2a_latency_s",
                   "deepep-uccl.a2a_per_copy_s",
                   "deepep-uccl.a2a_fill_tokens",
                   "deepep-uccl.a2a_node_latency_s",
                   "deepep-uccl.a2a_remote_token_s",
                   "layer_host_s"};
  p.in_sample = {51, 0.04, 0.1, -0.08, 0.07};
  p.cross_validated = {51, 0.07, 0.18, -0.2, 0.1};
  return p;
}

TEST(FittedProfile, RoundTripsThroughItsToml) {
  const std::string path = write_temp("roundtrip.toml", fitted_profile_toml(sample()));
  const FittedProfile p = load_fitted_profile(path);
  EXPECT_TRUE(p.fitted);
  EXPECT_EQ(p.path, path);
  EXPECT_EQ(p.fitted_at, "2026-11-29");
  EXPECT_EQ(p.cv_scheme, "leave-one-campaign-out");
  EXPECT_EQ(p.fit_objective, "huber 0.1");
  EXPECT_EQ(p.sim.network, NetworkMode::flow);
  EXPECT_EQ(p.sim.launch_s, 3.25e-05);
  EXPECT_EQ(p.sim.backward_launch_s, 3.25e-05 * kBackwardLaunchRatio);
  EXPECT_EQ(p.sim.generic_a2a.time_scale, 1.25);
  EXPECT_EQ(p.sim.compute_time_scale, 1);  // not in the file: default
  // Every parameter is written (the values predictions use); the dispatcher's pair starts from the generic.
  EXPECT_EQ(p.fitted_keys.size(), free_parameters().size() + a2a_parameter_leaves().size());
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").latency_s, 1.5e-3);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").time_scale, 1.25);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").per_copy_s, 2.5e-8);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").fill_tokens, 192.5);
  EXPECT_EQ(get_free_parameter(p.sim, "deepep-uccl.a2a_fill_tokens"), 192.5);
  EXPECT_EQ(p.sim.generic_a2a.fill_tokens, 0);  // the generic fill stays at its default
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").node_latency_s, 7.5e-4);
  EXPECT_EQ(get_free_parameter(p.sim, "deepep-uccl.a2a_node_latency_s"), 7.5e-4);
  EXPECT_EQ(p.sim.generic_a2a.node_latency_s, 0);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").remote_token_s, 1.25e-7);
  EXPECT_EQ(get_free_parameter(p.sim, "deepep-uccl.a2a_remote_token_s"), 1.25e-7);
  EXPECT_EQ(p.sim.generic_a2a.remote_token_s, 0);
  EXPECT_EQ(p.sim.layer_host_s, 1.25e-3);
  EXPECT_EQ(p.sim.moe_host_s, 0);                                               // written as its default 0
  EXPECT_EQ(get_free_parameter(p.sim, "deepep-nvshmem.a2a_time_scale"), 1.25);  // no entry: the generic
  EXPECT_EQ(p.cross_validated.rows, 51);
  EXPECT_EQ(p.cross_validated.signed_p10, -0.2);
  EXPECT_EQ(fitted_profile_toml(p), fitted_profile_toml(sample()));
}

TEST(FittedProfile, ProfileWithoutFillTokensLoadsWithNoFill) {
  // A profile that leaves a2a_fill_tokens, a2a_node_latency_s, a2a_remote_token_s and fit_objective out
  // (hand-written, or from a writer before they existed) loads with none of those terms and the squared
  // objective.
  std::string text = fitted_profile_toml(sample());
  for (const std::string line : {"\na2a_fill_tokens = 192.5", "\na2a_node_latency_s = 0.00075",
                                 "\na2a_remote_token_s = 1.25e-07", "\nfit_objective = \"huber 0.1\""}) {
    ASSERT_NE(text.find(line), std::string::npos) << line;
    text.erase(text.find(line), line.size());
  }
  const FittedProfile p = load_fitted_profile(write_temp("nofill.toml", text));
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").fill_tokens, 0);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").node_latency_s, 0);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").remote_token_s, 0);
  EXPECT_EQ(p.sim.a2a_by_dispatcher.at("deepep-uccl").per_copy_s, 2.5e-8);
  EXPECT_EQ(p.fit_objective, "squared log ratio");
}

TEST(FittedProfile, FillTokensBoundsAndGenericMedian) {
  const FreeParameter* fp = find_free_parameter("nccl-alltoall.a2a_fill_tokens");
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->key, "a2a_fill_tokens");
  EXPECT_EQ(fp->unit, "tokens");
  EXPECT_EQ(fp->lo, 0);
  EXPECT_EQ(fp->hi, 1024);
  SimProfile s;
  set_free_parameter(s, "a.a2a_fill_tokens", 100);
  set_free_parameter(s, "b.a2a_fill_tokens", 300);
  set_free_parameter(s, "c.a2a_fill_tokens", 200);
  set_generic_a2a_from_dispatchers(s);
  EXPECT_EQ(s.generic_a2a.fill_tokens, 200);             // median of 100, 200, 300
  EXPECT_EQ(s.a2a_by_dispatcher.at("a").time_scale, 1);  // created from the generic defaults
}

TEST(FittedProfile, GenericTermsFromTheDeepEpFamily) {
  // Fitted: nccl-alltoall (no node or per-token terms of its own) and two DeepEP transports. The generic
  // terms (for deepep-v2-gin, which has no runs) are the DeepEP pair's medians, not a three-way median
  // that would take nccl-alltoall's 0 or the smaller DeepEP value term by term.
  SimProfile s;
  set_free_parameter(s, "nccl-alltoall.a2a_time_scale", 1.38);
  set_free_parameter(s, "nccl-alltoall.a2a_latency_s", 0);
  set_free_parameter(s, "deepep-uccl.a2a_latency_s", 2e-3);
  set_free_parameter(s, "deepep-uccl.a2a_node_latency_s", 2e-4);
  set_free_parameter(s, "deepep-nvshmem.a2a_latency_s", 1e-3);
  set_free_parameter(s, "deepep-nvshmem.a2a_node_latency_s", 4e-4);
  set_generic_a2a_from_dispatchers(s);
  EXPECT_DOUBLE_EQ(s.generic_a2a.latency_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(s.generic_a2a.node_latency_s, 3e-4);
  EXPECT_EQ(s.generic_a2a.time_scale, 1);
  EXPECT_DOUBLE_EQ(s.a2a_for("deepep-v2-gin").latency_s, 1.5e-3);
  // Without a DeepEP-family fit, every fitted dispatcher counts.
  SimProfile n;
  set_free_parameter(n, "nccl-alltoall.a2a_time_scale", 1.38);
  set_generic_a2a_from_dispatchers(n);
  EXPECT_EQ(n.generic_a2a.time_scale, 1.38);
}

TEST(FittedProfile, UncertaintyBandFromCrossValidatedResiduals) {
  // Residual (predicted - measured) / measured in [-0.2, 0.1]: measured in [pred / 1.1, pred / 0.8].
  const UncertaintyBand b = band_for(sample(), 10);
  EXPECT_DOUBLE_EQ(b.lo_s, 10 / 1.1);
  EXPECT_DOUBLE_EQ(b.hi_s, 10 / 0.8);
  const FittedProfile defaults;
  const UncertaintyBand unfitted = band_for(defaults, 10);
  EXPECT_DOUBLE_EQ(unfitted.lo_s, 10 / 1.5);
  EXPECT_DOUBLE_EQ(unfitted.hi_s, 10 / 0.5);
}

TEST(FittedProfile, MarginResidualsRoundTripAndAreOptional) {
  FittedProfile with = sample();
  with.cross_validated_margin = {37, 0.12, 0.235};
  const FittedProfile p = load_fitted_profile(write_temp("margin.toml", fitted_profile_toml(with)));
  EXPECT_EQ(p.cross_validated_margin.pairs, 37);
  EXPECT_EQ(p.cross_validated_margin.median_abs, 0.12);
  EXPECT_EQ(p.cross_validated_margin.p90_abs, 0.235);
  EXPECT_EQ(fitted_profile_toml(p), fitted_profile_toml(with));
  // Written only when there are pairs; a profile without the table has none.
  EXPECT_EQ(fitted_profile_toml(sample()).find("cross_validated_margin"), std::string::npos);
  EXPECT_EQ(load_fitted_profile(write_temp("nomargin.toml", fitted_profile_toml(sample())))
                .cross_validated_margin.pairs,
            0);
}

TEST(FittedProfile, MarginExceedsTheCrossValidatedMarginError) {
  FittedProfile p = sample();
  p.cross_validated_margin = {37, 0.12, 0.2};
  EXPECT_DOUBLE_EQ(margin_uncertainty(p), 0.2);
  EXPECT_TRUE(margin_exceeds_uncertainty(p, 10, 12.1));
  EXPECT_FALSE(margin_exceeds_uncertainty(p, 10, 11.9));
  // Without margin residuals: the end-to-end bands (signed residuals -0.2..0.1: measured in
  // [pred / 1.1, pred / 0.8]) must not overlap, a far larger margin.
  const FittedProfile bands = sample();
  EXPECT_EQ(margin_uncertainty(bands), -1);
  EXPECT_FALSE(margin_exceeds_uncertainty(bands, 10, 12.1));
  EXPECT_FALSE(margin_exceeds_uncertainty(bands, 10, 13.7));  // 12.5 > 13.7 / 1.1 = 12.45
  EXPECT_TRUE(margin_exceeds_uncertainty(bands, 10, 13.8));
  // An unfitted profile has no margin residuals even if the struct says so.
  FittedProfile unfitted;
  unfitted.cross_validated_margin = {37, 0.12, 0.2};
  EXPECT_EQ(margin_uncertainty(unfitted), -1);
}

TEST(FittedProfile, GenericTermSourcesForDispatchersWithoutRuns) {
  FittedProfile p = sample();  // deepep-uccl fitted
  set_free_parameter(p.sim, "deepep-nvshmem.a2a_latency_s", 1e-3);
  set_free_parameter(p.sim, "nccl-alltoall.a2a_time_scale", 1.38);
  set_generic_a2a_from_dispatchers(p.sim);
  EXPECT_TRUE(has_own_a2a_terms(p, "deepep-uccl"));
  EXPECT_TRUE(has_own_a2a_terms(p, "nccl-alltoall"));
  EXPECT_FALSE(has_own_a2a_terms(p, "deepep-v2-gin"));
  const FittedProfile unfitted;
  EXPECT_FALSE(has_own_a2a_terms(unfitted, "deepep-uccl"));
  EXPECT_EQ(a2a_terms_label(p, "deepep-uccl"), "fitted");
  EXPECT_EQ(a2a_terms_label(p, "deepep-v2-gin"), "generic");
  EXPECT_EQ(a2a_terms_label(unfitted, "deepep-v2-gin"), "defaults");
  const auto sources = generic_a2a_sources(p);
  ASSERT_EQ(sources.size(), 2u);  // the DeepEP family, not nccl-alltoall
  EXPECT_EQ(sources[0].first, "deepep-nvshmem");
  EXPECT_EQ(sources[1].first, "deepep-uccl");
  EXPECT_EQ(sources[0].second.sim.a2a_for("deepep-v2-gin").latency_s, 1e-3);
  EXPECT_EQ(sources[1].second.sim.a2a_for("deepep-v2-gin").latency_s, 1.5e-3);
  EXPECT_EQ(sources[1].second.sim.a2a_for("deepep-v2-gin").node_latency_s, 7.5e-4);
  // The measured dispatchers keep their own terms in every source profile.
  EXPECT_EQ(sources[0].second.sim.a2a_for("deepep-uccl").latency_s, 1.5e-3);
  EXPECT_TRUE(generic_a2a_sources(unfitted).empty());
}

TEST(FittedProfile, TermSpreadOfADispatcherWithoutRuns) {
  // qwen3-30b-a3b cut to 2 layers on 2 p5en nodes, one EP16 group over both: the A2A terms matter.
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  auto scenario = [&](const std::string& dispatcher) {
    return parse_scenario(
        "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n[cluster]\ninstance = "
        "\"p5en.48xlarge\"\nnodes = 2\n[parallelism]\ntp = 1\npp = 1\nep = 16\ndp = 16\n[training]\n"
        "micro_batch = 1\nglobal_batch = 32\nseq_length = 4096\n[dispatcher]\nname = \"" +
            dispatcher + "\"\n",
        "t.toml", catalog);
  };
  FittedProfile p = sample();  // deepep-uccl: 1.5 ms per call, 0.75 ms per remote node
  set_free_parameter(p.sim, "deepep-nvshmem.a2a_latency_s", 1e-4);
  set_free_parameter(p.sim, "deepep-nvshmem.a2a_node_latency_s", 0);
  set_generic_a2a_from_dispatchers(p.sim);
  const Scenario gin = scenario("deepep-v2-gin");
  const double t = predict(gin, predict_options_for(gin, p)).iteration_s;
  const TermSpread spread = a2a_term_spread(gin, p, t);
  EXPECT_FALSE(spread.own_terms);
  EXPECT_LT(spread.fastest_s, t);  // with NVSHMEM's cheaper calls
  EXPECT_GT(spread.slowest_s, t);  // with UCCL-EP's dearer ones
  EXPECT_EQ(spread.band.lo_s, band_for(p, spread.fastest_s).lo_s);
  EXPECT_EQ(spread.band.hi_s, band_for(p, spread.slowest_s).hi_s);
  // A dispatcher with its own terms is not replayed: both ends are its prediction.
  const Scenario uccl = scenario("deepep-uccl");
  const TermSpread own = a2a_term_spread(uccl, p, 12.5);
  EXPECT_TRUE(own.own_terms);
  EXPECT_EQ(own.fastest_s, 12.5);
  EXPECT_EQ(own.slowest_s, 12.5);
  EXPECT_EQ(own.band.lo_s, band_for(p, 12.5).lo_s);
}

// The shipped sample's TOML with `from` replaced by `to`, loaded from `name`: an InputError naming the
// file and containing every one of `expected`.
void expect_load_error(const std::string& name, const std::string& from, const std::string& to,
                       const std::vector<std::string>& expected) {
  std::string text = fitted_profile_toml(sample());
  ASSERT_NE(text.find(from), std::string::npos) << from;
  text.replace(text.find(from), from.size(), to);
  const std::string path = write_temp(name, text);
  try {
    load_fitted_profile(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path + ":"), std::string::npos) << what;
    for (const std::string& part : expected) EXPECT_NE(what.find(part), std::string::npos) << what;
  }
}

TEST(FittedProfile, OutOfBoundsParameterIsAnInputError) {
  expect_load_error("bounds.toml", "\na2a_time_scale = 1.25", "\na2a_time_scale = 50",
                    {"parameters.a2a_time_scale: 50"});
  // A transfer scale beyond 1.5x the standalone benchmark (the 3.55 the 2026-12-01 B300-only fit gave
  // NCCL) is refused: such a gap is a mechanism to name, not a multiplier.
  expect_load_error("scale.toml", "\na2a_time_scale = 1.25", "\na2a_time_scale = 3.55",
                    {"parameters.a2a_time_scale: 3.55", "a number in [1, 1.5]"});
}

TEST(FittedProfile, OlderSchemaProfileIsAnInputErrorAskingForARefit) {
  // Schema 1 scaled the dispatchers' handshake latency too: its a2a_time_scale means something else,
  // so loading it would shift every prediction silently. Schema 2 held the DeepEP per-node and per-token
  // terms on whatever instance its rows ran, not at the reference instance.
  expect_load_error("schema1.toml", "schema_version = 3", "schema_version = 1",
                    {"schema_version: 1", "refit"});
  expect_load_error("schema2.toml", "schema_version = 3", "schema_version = 2",
                    {"schema_version: 2", "reference instance", "refit"});
}

TEST(FittedProfile, UnknownFitObjectiveIsAnInputError) {
  expect_load_error("network.toml", "network = \"flow\"", "network = \"fluid\"",
                    {"network", "fluid", "\"closed-form\" or \"flow\""});
  expect_load_error("objective.toml", "fit_objective = \"huber 0.1\"", "fit_objective = \"cubic\"",
                    {"fit_objective", "cubic", "huber <knee > 0>"});
  expect_load_error("knee.toml", "fit_objective = \"huber 0.1\"", "fit_objective = \"huber -1\"",
                    {"fit_objective", "huber -1"});
}

TEST(FittedProfile, UnknownParameterIsAnInputError) {
  std::string text = fitted_profile_toml(sample());
  text.replace(text.find("[parameters]\n"), 13, "[parameters]\ngemm_magic = 3\n");
  const std::string path = write_temp("unknown.toml", text);
  EXPECT_THROW(load_fitted_profile(path), InputError);
}

TEST(FittedProfile, ResolveNoneAndMissingFile) {
  EXPECT_FALSE(resolve_fitted_profile("none").fitted);
  EXPECT_THROW(resolve_fitted_profile(::testing::TempDir() + "no-such-profile.toml"), InputError);
}

TEST(FittedProfile, ParametersAreBoundedAndNamed) {
  for (const FreeParameter& p : free_parameters()) {
    EXPECT_LT(p.lo, p.hi) << p.key;
    EXPECT_GE(p.lo, 0) << p.key;
    EXPECT_FALSE(p.meaning.empty()) << p.key;
    EXPECT_EQ(find_free_parameter(p.key), &p);
  }
  EXPECT_EQ(find_free_parameter("nope"), nullptr);
  EXPECT_EQ(find_free_parameter("deepep-uccl.a2a_time_scale"), find_free_parameter("a2a_time_scale"));
  EXPECT_EQ(find_free_parameter("deepep-uccl.launch_s"), nullptr);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// Terms of the transfer mechanisms: a dispatcher-model parameter (NCCL's per-chunk cost), a stack-scoped
// A2A scale and the fit's coverage round-trip, and a prediction outside the coverage says so.
TEST(FittedProfile, ModelStackAndCoverageTermsRoundTrip) {
  FittedProfile p = sample();
  set_free_parameter(p.sim, "nccl-alltoall.a2a_time_scale", 1.2);
  set_free_parameter(p.sim, "nccl-alltoall.net_chunk_s", 2.25e-6);
  set_free_parameter(p.sim, "megatron-lm-core_r0.17.0-nccl2.28.9.stack_a2a_scale", 1.3);
  p.coverage.gpus = {"B300"};
  p.coverage.instances = {"p6-b300.48xlarge"};
  p.coverage.stacks = {"nemo-26.04.01"};
  p.coverage.dispatchers = {"deepep-uccl", "nccl-alltoall"};
  p.coverage.precisions = {"bf16"};
  const FittedProfile q = load_fitted_profile(write_temp("terms.toml", fitted_profile_toml(p)));
  EXPECT_EQ(q.sim.model_params.at("nccl-alltoall.net_chunk_s"), 2.25e-6);
  EXPECT_EQ(get_free_parameter(q.sim, "nccl-alltoall.net_chunk_s"), 2.25e-6);
  EXPECT_EQ(q.sim.stack_a2a_scale.at("megatron-lm-core_r0.17.0-nccl2.28.9"), 1.3);
  EXPECT_EQ(get_free_parameter(q.sim, "nemo-26.04.01.stack_a2a_scale"), 1.0);  // no entry: 1
  EXPECT_EQ(q.coverage.dispatchers, p.coverage.dispatchers);
  EXPECT_EQ(q.coverage.precisions, p.coverage.precisions);
  ASSERT_NE(find_free_parameter("nemo-26.04.01.stack_a2a_scale"), nullptr);
  EXPECT_EQ(find_free_parameter("nemo-26.04.01.stack_a2a_scale")->hi, 1.5);
  EXPECT_EQ(find_free_parameter("nccl-alltoall.net_chunk_s")->hi, 2e-5);
  // Unfitted dispatchers read their model default.
  EXPECT_EQ(get_free_parameter(FittedProfile{}.sim, "nccl-alltoall.net_chunk_s"), 0.0);
}

TEST(FittedProfile, CoverageWarningsNameTheNewDimension) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  FittedProfile p = sample();
  p.coverage.gpus = {"B300"};
  p.coverage.instances = {"p6-b300.48xlarge"};
  p.coverage.stacks = {"nemo-26.04.01"};
  p.coverage.dispatchers = {"nccl-alltoall"};
  p.coverage.precisions = {"bf16"};
  const Scenario s = load_scenario_file(
      std::string(MOETWIN_SOURCE_DIR) + "/scenarios/live/uccl-p5en-4n-20260430.toml", catalog);
  const std::vector<std::string> w = coverage_warnings(s, p);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0], "GPU H200-SXM: no live runs in the fit");
  EXPECT_NE(w[1].find("instance p5en.48xlarge: no live runs in the fit"), std::string::npos);
  EXPECT_NE(w[2].find("stack megatron-lm-core_r0.17.0-nccl2.28.9: no live runs in the fit"),
            std::string::npos);
  EXPECT_EQ(w[3], "precision fp8-hybrid: no live runs in the fit");
  EXPECT_TRUE(coverage_warnings(s, FittedProfile{}).empty());  // unfitted: nothing to compare with
  EXPECT_EQ(novelty_of(s, p).level(), "platform");
  FittedProfile dispatcher_only = p;  // a dispatcher without live training rows is new (issue 53)
  dispatcher_only.coverage.gpus.push_back("H200-SXM");
  dispatcher_only.coverage.instances.push_back("p5en.48xlarge");
  dispatcher_only.coverage.stacks.push_back("megatron-lm-core_r0.17.0-nccl2.28.9");
  dispatcher_only.coverage.precisions.push_back("fp8-hybrid");
  dispatcher_only.coverage.dispatchers = {"deepep-uccl"};
  EXPECT_EQ(novelty_of(s, dispatcher_only).level(), "configuration");
  EXPECT_EQ(coverage_warnings(s, dispatcher_only).size(), 1u);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// Outside the fit's coverage each novel dimension widens the band by its growth per unit x its distance,
// in quadrature with the in-family half-width (log space) and with the other new dimensions; a dimension
// the profile has no band for grows by ln 1.5 (+-50%) per unit. Inside it the band is band_for's.
TEST(FittedProfile, BandGrowsWithDistanceInQuadrature) {
  FittedProfile p = sample();  // in-family signed quantiles -0.2 / +0.1
  const UncertaintyBand in = band_for(p, 10);
  EXPECT_EQ(band_for(p, 10, Novelty{}).lo_s, in.lo_s);
  const double a = -std::log(0.8), b = std::log(1.1);  // in-family log half-widths (slow, fast side)
  Novelty gpu;
  gpu.novel.push_back({NoveltyDimension::gpu, "B200", "GPU B200: no live runs in the fit", 1.0});
  const UncertaintyBand prior = band_for(p, 10, gpu);
  const double u0 = std::log(1.5);
  EXPECT_NEAR(prior.lo_s, 10 * std::exp(-std::sqrt(b * b + u0 * u0)), 1e-9);
  EXPECT_NEAR(prior.hi_s, 10 * std::exp(std::sqrt(a * a + u0 * u0)), 1e-9);
  p.novelty_bands["gpu"] = {7, std::expm1(-0.1), std::expm1(0.1), "measured: 7 held-out rows", 0.1};
  const UncertaintyBand novel = band_for(p, 10, gpu);
  EXPECT_NEAR(novel.lo_s, 10 * std::exp(-std::sqrt(b * b + 0.01)), 1e-9);
  EXPECT_NEAR(novel.hi_s, 10 * std::exp(std::sqrt(a * a + 0.01)), 1e-9);
  EXPECT_NE(
      band_source(p, gpu).find("widened in quadrature (combined distance 1.0) for gpu B200 at distance 1.0: "
                               "+-11% per unit, measured"),
      std::string::npos)
      << band_source(p, gpu);
  // The same dimension farther away: strictly wider, at every distance.
  p.novelty_bands["scale"] = {0, std::expm1(-0.2), std::expm1(0.2), "prior", 0.2};
  double last_hi = in.hi_s;
  double last_lo = in.lo_s;
  for (const double d : {1.0, std::log2(4096.0 / 32), std::log2(100000.0 / 32)}) {
    Novelty far;
    far.novel.push_back({NoveltyDimension::scale, "n nodes", "beyond", d});
    const UncertaintyBand f = band_for(p, 10, far);
    EXPECT_GT(f.hi_s, last_hi) << d;
    EXPECT_LT(f.lo_s, last_lo) << d;
    last_hi = f.hi_s;
    last_lo = f.lo_s;
  }
  // Two new dimensions give a wider band than either alone; a dispatcher without runs is not banded here.
  Novelty two = gpu;
  two.novel.push_back({NoveltyDimension::scale, "64 nodes", "64 nodes: no live runs in the fit", 1.0});
  two.novel.push_back({NoveltyDimension::dispatcher, "deepep-v2-gin", "no runs", 0.0});
  Novelty scale_only;
  scale_only.novel.push_back(two.novel[1]);
  const UncertaintyBand both = band_for(p, 10, two);
  EXPECT_GT(both.hi_s, band_for(p, 10, scale_only).hi_s);
  EXPECT_GT(both.hi_s, novel.hi_s);
  EXPECT_NEAR(both.hi_s, 10 * std::exp(std::sqrt(a * a + 0.01 + 0.04)), 1e-9);
  EXPECT_NEAR(two.distance(), std::sqrt(2.0), 1e-12);
  // The margin uncertainty grows with the band's log width.
  p.cross_validated_margin = {10, 0.05, 0.1};
  const double ratio = (std::sqrt(a * a + 0.05) + std::sqrt(b * b + 0.05)) / (a + b);
  EXPECT_NEAR(margin_uncertainty(p, two), 0.1 * ratio, 1e-12);
  EXPECT_DOUBLE_EQ(margin_uncertainty(p, Novelty{}), 0.1);
  // The bands round-trip, per_unit and groups included (groups: -1, not recorded, is not written); a
  // profile written before per_unit reads error_hi as one unit.
  p.novelty_bands.at("gpu").groups = 4;
  const FittedProfile q = load_fitted_profile(write_temp("novel.toml", fitted_profile_toml(p)));
  ASSERT_EQ(q.novelty_bands.size(), 2u);
  EXPECT_EQ(q.novelty_bands.at("gpu").rows, 7);
  EXPECT_EQ(q.novelty_bands.at("gpu").groups, 4);
  EXPECT_EQ(q.novelty_bands.at("scale").groups, -1);
  EXPECT_EQ(q.novelty_bands.at("scale").per_unit, 0.2);
  EXPECT_EQ(q.novelty_bands.at("scale").source, "prior");
  NoveltyBand old{7, -0.23, 0.23, "an older profile", -1};
  EXPECT_DOUBLE_EQ(old.unit_width(), std::log1p(0.23));
  // Profiles without the tables load with none.
  EXPECT_TRUE(
      load_fitted_profile(write_temp("plain.toml", fitted_profile_toml(sample()))).novelty_bands.empty());
}

// With a campaign band (a profile fitted with the fold-consistent --cv), the in-family band is the fit's
// in-sample spread and a new campaign's in quadrature, per side in log space; the novel dimensions add to
// that. It round-trips; a profile without it keeps the cross-validated quantiles.
TEST(FittedProfile, CampaignBandWidensTheInSampleSpread) {
  FittedProfile p = sample();  // in sample -8% / +7%; cross-validated -20% / +10%
  const UncertaintyBand old_band = band_for(p, 10);
  EXPECT_NEAR(old_band.hi_s, 10 / 0.8, 1e-9);
  p.campaign_band = {40, std::expm1(-0.1), std::expm1(0.1), "measured: 40 held-out rows at distance 0", 0.1};
  const double a = -std::log(0.92), b = std::log(1.07);  // in-sample log half-widths (slow, fast side)
  const UncertaintyBand in = band_for(p, 10);
  EXPECT_NEAR(in.lo_s, 10 * std::exp(-std::sqrt(b * b + 0.01)), 1e-9);
  EXPECT_NEAR(in.hi_s, 10 * std::exp(std::sqrt(a * a + 0.01)), 1e-9);
  Novelty gpu;
  gpu.novel.push_back({NoveltyDimension::gpu, "B200", "GPU B200: no live runs in the fit", 2.0});
  p.novelty_bands["gpu"] = {7, std::expm1(-0.12), std::expm1(0.12), "measured: 7 held-out rows", 0.12};
  EXPECT_NEAR(band_for(p, 10, gpu).hi_s, 10 * std::exp(std::sqrt(a * a + 0.01 + 0.0576)), 1e-9);
  // A measured rate below what a new campaign adds is raised to it (the floor: no new dimension is free).
  p.novelty_bands["gpu"] = {7, std::expm1(-0.05), std::expm1(0.05), "measured: 7 held-out rows", 0.05};
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::gpu), 0.1);
  EXPECT_NEAR(band_for(p, 10, gpu).hi_s, 10 * std::exp(std::sqrt(a * a + 0.01 + 0.04)), 1e-9);
  EXPECT_NE(growth_floor_reason(p, NoveltyDimension::gpu).find("what a new campaign adds"),
            std::string::npos);
  EXPECT_NE(
      band_source(p, Novelty{}).find("in-sample spread (51 rows) and a new campaign's +-11% (measured: 40"),
      std::string::npos)
      << band_source(p, Novelty{});
  const FittedProfile q = load_fitted_profile(write_temp("campaign.toml", fitted_profile_toml(p)));
  EXPECT_EQ(q.campaign_band.rows, 40);
  EXPECT_EQ(q.campaign_band.per_unit, 0.1);
  EXPECT_EQ(q.campaign_band.source, "measured: 40 held-out rows at distance 0");
  EXPECT_NEAR(band_for(q, 10).hi_s, in.hi_s, 1e-12);
  EXPECT_LT(load_fitted_profile(write_temp("no-campaign.toml", fitted_profile_toml(sample())))
                .campaign_band.per_unit,
            0);
}

// A rate measured on held-out groups (kMinMeasuredGroups = 1: any) stands below the new-campaign floor,
// down to kMeasuredFloorPerUnit, and the floor's reason names how many groups measured it; a band without
// its groups recorded (a prior, an older profile) keeps the new-campaign floor.
TEST(FittedProfile, AMeasuredRateStandsOnItsGroupsAndTheReasonNamesThem) {
  FittedProfile p = sample();
  p.campaign_band = {40, std::expm1(-0.1), std::expm1(0.1), "measured: 40 held-out rows at distance 0", 0.1};
  p.novelty_bands["nvlink-domain"] = {60, std::expm1(-0.004), std::expm1(0.004), "measured: 60 rows", 0.004};
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::nvlink_domain), 0.1);  // groups not recorded
  p.novelty_bands["nvlink-domain"].groups = 2;
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::nvlink_domain), kMeasuredFloorPerUnit);
  const std::string two = growth_floor_reason(p, NoveltyDimension::nvlink_domain);
  EXPECT_NE(two.find("floor +-2.5% per unit"), std::string::npos) << two;
  EXPECT_NE(two.find("measured 0.4% on 2 held-out groups"), std::string::npos) << two;
  p.novelty_bands["nvlink-domain"].groups = 1;
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::nvlink_domain), kMeasuredFloorPerUnit);
  EXPECT_NE(growth_floor_reason(p, NoveltyDimension::nvlink_domain).find("on 1 held-out group)"),
            std::string::npos);
}

// [coverage] keeps the fitted models' shapes and routings; an older profile without them loads (a new
// model 1 unit away, every routing covered).
TEST(FittedProfile, CoverageShapesAndRoutingsRoundTrip) {
  FittedProfile p = sample();
  p.coverage.gpus = {"B300"};
  p.coverage.stacks = {"nemo-26.04.01"};
  p.coverage.dispatchers = {"deepep-uccl"};
  p.coverage.models = {"deepseek-v3"};
  p.coverage.routings = {"balanced"};
  p.coverage.model_shapes["deepseek-v3"] = {7168, 2048, 256, 8, 61, "mla"};
  p.coverage.nodes = {4, 32};
  p.coverage.rows = {"campaign=a;gpu=B300;instance=p6-b300.48xlarge",
                     "campaign=b;gpu=B300;instance=p5.48xlarge"};
  const std::string text = fitted_profile_toml(p);
  const FittedProfile q = load_fitted_profile(write_temp("shapes.toml", text));
  EXPECT_EQ(q.coverage.rows, p.coverage.rows);
  EXPECT_EQ(q.coverage.routings, (std::vector<std::string>{"balanced"}));
  ASSERT_EQ(q.coverage.model_shapes.count("deepseek-v3"), 1u);
  EXPECT_EQ(q.coverage.model_shapes.at("deepseek-v3").experts, 256);
  EXPECT_EQ(q.coverage.model_shapes.at("deepseek-v3").attention, "mla");
  std::string old = text;
  old.erase(old.find("[coverage.model_shapes"));
  old.erase(old.find("routings = "), old.find('\n', old.find("routings = ")) - old.find("routings = ") + 1);
  const FittedProfile r = load_fitted_profile(write_temp("old-coverage.toml", old));
  EXPECT_TRUE(r.coverage.routings.empty());
  EXPECT_TRUE(r.coverage.model_shapes.empty());
}

}  // namespace
}  // namespace moetwin
