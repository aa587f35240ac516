// The parameter registry: every term under one key with the layer its value comes from, for the shipped
// profile and for the unfitted defaults; every key is one the live-run fit can address.
#include "moetwin/sim/parameter_registry.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "moetwin/test_support/shipped_profile.hpp"

namespace moetwin {
namespace {

std::map<std::string, RegistryEntry> by_key(const FittedProfile& profile) {
  std::map<std::string, RegistryEntry> out;
  for (const RegistryEntry& e : parameter_registry(profile, Catalog::shared_default())) {
    EXPECT_TRUE(out.emplace(e.key, e).second) << "duplicate key " << e.key;
  }
  return out;
}

TEST(ParameterRegistry, ShippedProfileLayers) {
  const FittedProfile& profile = test_support::shipped_fitted_profile();
  const auto r = by_key(profile);
  EXPECT_EQ(r.at("launch_s").layer, "fitted on live runs");
  EXPECT_EQ(r.at("launch_s").scope, "global");
  EXPECT_EQ(r.at("deepep-uccl.a2a_latency_s").layer, "fitted on live runs");
  // The shipped fit has no deepep-v2-gin rows: its A2A terms are the generic ones.
  EXPECT_EQ(r.at("deepep-v2-gin.a2a_latency_s").layer, "generic (no runs of it)");
  EXPECT_EQ(r.at("deepep-v2-gin.a2a_latency_s").value, profile.sim.generic_a2a.latency_s);
  EXPECT_EQ(r.at("nccl-alltoall.net_chunk_s").layer, "fitted on live runs");
  EXPECT_EQ(r.at("nccl-alltoall.net_chunk_s").value,
            profile.sim.model_params.at("nccl-alltoall.net_chunk_s"));
  const DispatcherSpec& uccl = Catalog::shared_default().dispatcher("deepep-uccl");
  EXPECT_EQ(r.at("deepep-uccl.latency_rounds").layer, "calibrated on kernel benchmarks");
  EXPECT_EQ(r.at("deepep-uccl.latency_rounds").value, uccl.terms.front().value);
  // DeepEP v2 has its own terms from its p6-b200 benchmarks (issue 39), no longer DeepEP v1's.
  EXPECT_EQ(r.at("deepep-v2-gin.per_message_s").layer, "calibrated on kernel benchmarks");
  // An instance's own write cost is listed under its scope, with the rows that set it.
  const RegistryEntry& p5 = r.at("deepep-uccl.per_message_s@p5.48xlarge");
  EXPECT_EQ(p5.scope, "dispatcher deepep-uccl, instance p5.48xlarge");
  EXPECT_EQ(p5.layer, "calibrated on kernel benchmarks");
  EXPECT_NE(p5.meaning.find("low-latency rows"), std::string::npos) << p5.meaning;
  // The in-training DeepEP terms say which mechanism carries them to another instance.
  EXPECT_NE(r.at("deepep-uccl.a2a_remote_token_s").meaning.find("reference instance"), std::string::npos);
  EXPECT_EQ(r.at("megatron-lm-core_r0.17.0-nccl2.28.9.stack_a2a_scale").layer, "fitted on this stack's rows");
  EXPECT_EQ(r.at("nemo-26.04.01.stack_a2a_scale").layer, "default (no rows of this stack)");
  EXPECT_EQ(r.at("nemo-26.04.01.stack_a2a_scale").value, 1.0);
  for (const auto& [key, e] : r) {
    // Instance-scoped record terms ("name@instance") are benchmark calibrations the live fit does not move.
    if (key.find('@') == std::string::npos) {
      EXPECT_NE(find_free_parameter(key), nullptr) << key;
    }
    EXPECT_GE(e.value, e.lo) << key;
    EXPECT_LE(e.value, e.hi) << key;
    EXPECT_FALSE(e.unit.empty()) << key;
    EXPECT_FALSE(e.meaning.empty()) << key;
  }
}

TEST(ParameterRegistry, UnfittedDefaultsHaveNoFittedLayer) {
  for (const auto& [key, e] : by_key(FittedProfile{})) {
    EXPECT_NE(e.layer, "fitted on live runs") << key;
    EXPECT_NE(e.layer, "generic (no runs of it)") << key;
  }
}

TEST(ParameterRegistry, AnyRecordTermIsAddressableByTheFit) {
  SimProfile p;
  set_free_parameter(p, "deepep-uccl.latency_rounds", 9.5);
  EXPECT_EQ(p.model_params.at("deepep-uccl.latency_rounds"), 9.5);
  EXPECT_EQ(get_free_parameter(p, "deepep-uccl.latency_rounds"), 9.5);
  EXPECT_EQ(get_free_parameter(p, "deepep-nvshmem.latency_rounds"),
            Catalog::shared_default().dispatcher("deepep-nvshmem").terms.front().value);  // the record's
  const FreeParameter* fp = find_free_parameter("deepep-uccl.latency_rounds");
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->unit, "count");
  EXPECT_EQ(fp->hi, 20);
  // A term the record does not have is no key.
  EXPECT_EQ(find_free_parameter("deepep-uccl.net_chunk_s"), nullptr);
}

}  // namespace
}  // namespace moetwin
