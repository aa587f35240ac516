#include "moetwin/sim/fitted_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/quoted_string.hpp"
#include "moetwin/common/statistics.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/dispatcher_moe_cost.hpp"

#ifndef MOETWIN_DEFAULT_PROFILE
#define MOETWIN_DEFAULT_PROFILE "calibrate/profiles/fitted/live-fit.toml"
#endif

namespace moetwin {

namespace {

// 2: a2a_time_scale multiplies the dispatcher models' transfer terms only (their handshake latency is
// not scaled); schema 1 scaled the whole call, so its fitted values mean something else.
// 3: the DeepEP per-remote-node and per-remote-token terms hold at the reference instance and the per-call
// term at the reference CPU (dispatcher_cost.hpp); schema 2's held wherever the rows were.
constexpr int kProfileSchemaVersion = 3;

// Bounds: wide enough that the fit is free to find the answer, narrow enough that a parameter cannot
// absorb a missing mechanism by going unphysical.
//  - compute_time_scale 0.7-4: nothing runs faster than ~1.4x the catalog efficiencies (which are
//    already below peak), and no scaled efficiency above kMaxKernelEfficiency (0.9 of peak,
//    compute_model.hpp); 4x (~15-20% of peak) is the worst MoE training MFU reported for small shapes.
//    It scales catalog roofline times only: GEMMs with a measured calibration curve keep their times.
//  - launch_s 2-80 us: CUDA's back-to-back launch floor (~2-4 us, calibrate launch benchmark on H200)
//    up to Python-heavy eager ops with autograd bookkeeping (PyTorch profiler: 20-60 us per op).
//  - layer_host_s 0-10 ms per layer forward, moe_host_s 0-20 ms per MoE layer forward: from nothing beyond
//    the launches to Python-bound layers (PyTorch profiler traces of Megatron MoE layers show a few ms of
//    host time per layer forward, more with many local experts and dispatcher bookkeeping).
//  - collective_time_scale 0.7-10: NCCL over EFA reaching 1.4x the closed form would beat line rate; 10x
//    covers small-message latency-bound collectives on a congested fabric.
//  - a2a_time_scale 1-1.5: the dispatcher models' transfer terms are calibrated on the standalone kernel
//    benchmarks (ep-kernel-bench.csv, nccl-tests), and an A2A inside a training step, sharing the GPU,
//    the host and the fabric, does not move bytes faster than the same kernel alone; beyond 1.5x the
//    benchmark the difference is a mechanism to name (per-chunk costs, extra calls, host syncs), not a
//    scale: an unbounded scale fitted on one stack (3.55x for NeMo 26.04's NCCL all-to-all) carried to
//    another stack as a property of NCCL (+92% on the p5en runs).
//  - a2a_latency_s 0 - 5 ms per A2A call: from nothing beyond the model (GPU-initiated RDMA) to a host
//    round trip through a CPU proxy plus the host synchronisation on the token counts (ms-scale stalls
//    in UCCL-EP / NVSHMEM proxy traces).
//  - a2a_per_copy_s 0 - 0.5 us per received token copy per call: 0.5 us x 16k copies (mb 4, seq 4096,
//    TP8, top-8) = 8 ms per call, beyond any A2A the live runs show.
//  - a2a_fill_tokens 0 - 1024 tokens per peer per call: DeepEP normal mode keeps
//    num_max_*_chunked_send/recv_tokens (128-512) per channel and peer in flight; 1024 tokens x 31 peers x
//    7168 x 2 bytes at 100 GB/s per GPU (p6-b300 rails) = 4.5 ms per call, the size of the largest
//    per-call residual the live runs show. Starts mid-range (128): below a few tokens it has no slope.
//  - a2a_node_latency_s 0 - 3 ms per call per remote node: from nothing (GPU-initiated RDMA, one pipeline
//    for all peers) to a host proxy round trip plus a per-peer chunk pipeline fill/drain per remote node
//    (the largest EP32-over-EP16 difference per call the live runs show is ~3 ms over 2 extra nodes).
//    Starts at 0.2 ms: at 0 it has no slope in log space.
//  - a2a_remote_token_s 0 - 1 us per token sent to (received from) another node per call: DeepEP's
//    per-token work outside the byte stream is tens to hundreds of ns (a warp-level loop iteration with
//    metadata and flag writes per token, a proxy's bookkeeping per token); 1 us x 5.5k remote tokens (EP32
//    over 4 nodes, mb 4, top-8) = 5.5 ms per call, beyond any A2A the live runs show. Starts at 50 ns.
const std::vector<FreeParameter>& parameter_table() {
  static const std::vector<FreeParameter> table = {
      {"compute_time_scale", "x", 0.7, 4.0,
       "GPU kernel time over its catalog roofline time (measured GEMM curves keep theirs)", 0},
      {"launch_s", "s", 2e-6, 80e-6, "host time per forward kernel launch (backward: half)", 0},
      {"layer_host_s", "s", 0.0, 10e-3, "host time per transformer layer forward beyond its launches", 1e-3},
      {"moe_host_s", "s", 0.0, 20e-3, "host time per MoE layer forward after the token-count sync", 1e-3},
      {"collective_time_scale", "x", 0.7, 10.0, "NCCL TP/PP/DP collective time over the topology closed form",
       0},
      {"a2a_time_scale", "x", 1.0, 1.5,
       "dispatch/combine transfer time over the dispatcher model (its handshake latency unscaled)", 0},
      // The descriptions below name the file that carries these terms to another instance
      // (models/dispatcher_cost.hpp: a2a_transfer); they are output (`params`, the fit report, the written
      // profile's comments).
      {"a2a_latency_s", "s", 0.0, 5e-3,
       "fixed time per dispatch/combine call (host sync, proxy round trip), at the reference CPU (8559C); on "
       "another instance x its host time factor (dispatcher_cost.hpp)",
       0},
      {"a2a_per_copy_s", "s", 0.0, 0.5e-6, "time per received token copy per dispatch/combine call", 2e-8},
      {"a2a_fill_tokens", "tokens", 0.0, 1024.0,
       "pipeline fill per peer per dispatch/combine call: fill x (EP-1) x hidden x 2 B / link bandwidth",
       128},
      {"a2a_node_latency_s", "s", 0.0, 3e-3,
       "time per dispatch/combine call per remote node of the EP group, at the reference instance "
       "(p6-b300); elsewhere x one RDMA write's cost on the dispatcher's posting path there over here "
       "(per_message_s per instance, low-latency benchmarks; dispatcher_cost.hpp)",
       2e-4},
      {"a2a_remote_token_s", "s", 0.0, 1e-6,
       "time per token sent to (combine: received from) another node per dispatch/combine call, whatever the "
       "hidden size, at the reference instance (p6-b300); elsewhere x the posting path's write cost there "
       "over here (dispatcher_cost.hpp)",
       5e-8},
  };
  return table;
}

// Every term of a dispatcher's catalog record (dispatchers.toml [[<name>.terms]]) is addressable by the
// live-run fit as "<dispatcher>.<term>" (SimProfile::model_params), with the record's unit and bounds.
// These have a live-fit meaning and start of their own: net_chunk_s 0-20 us per NCCL network chunk, from
// nothing (the chunk's work hides behind the wire) to a rendezvous control message, an RDMA write post and
// its completion on a busy proxy thread (aws-ofi-nccl per-message host work is a few us; 20 us is an EFA
// round trip and a half). Other terms start at their record's value and are described by its source.
struct LiveFitMeaning {
  const char* term;
  const char* meaning;
  double fit_start;
};
constexpr LiveFitMeaning kLiveFitMeanings[] = {
    {"net_chunk_s",
     "NCCL P2P time per network chunk beyond its bytes (proxy, rendezvous, completion), serial per GPU, at "
     "the reference CPU (8559C): the proxy thread's host work, x the host time factor elsewhere; charged for "
     "the chunks a run's P2P chunk size adds over nccl-tests' 512 KiB",
     2e-6},
};

// The shared default catalog's record of `dispatcher`; nullptr for names it lacks (a profile fitted with
// another catalog).
const DispatcherSpec* dispatcher_record(const std::string& dispatcher) {
  const auto& all = Catalog::shared_default().dispatchers();
  const auto it = all.find(dispatcher);
  return it != all.end() ? &it->second : nullptr;
}

// The record term `dispatcher`.`term`; nullptr when there is none.
const ModelParam* record_term(const std::string& dispatcher, const std::string& term) {
  const DispatcherSpec* record = dispatcher_record(dispatcher);
  if (record == nullptr) return nullptr;
  for (const ModelParam& m : record->terms) {
    if (m.name == term) return &m;
  }
  return nullptr;
}

// Per software stack ("<stack>.stack_a2a_scale", SimProfile::stack_a2a_scale). Bounds 0.8-1.5: what a stack
// may change about the same kernels' in-training transfer time without a named mechanism; beyond it the
// difference is a mechanism to find.
const FreeParameter& stack_scale_parameter() {
  static const FreeParameter p = {
      "stack_a2a_scale",
      "x",
      0.8,
      1.5,
      "this stack's in-training A2A transfer time over the dispatcher terms (every dispatcher on it)",
      1.0};
  return p;
}

std::optional<std::string> stack_of_key(const std::string& key) {
  const std::size_t dot = key.rfind('.');
  if (dot == std::string::npos || dot == 0 || key.substr(dot + 1) != stack_scale_parameter().key)
    return std::nullopt;
  return key.substr(0, dot);
}

// "<dispatcher>.<record term>" -> {dispatcher, term}; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_model_key(const std::string& key) {
  const std::size_t dot = key.rfind('.');
  if (dot == std::string::npos || dot == 0) return std::nullopt;
  if (record_term(key.substr(0, dot), key.substr(dot + 1)) == nullptr) return std::nullopt;
  return std::make_pair(key.substr(0, dot), key.substr(dot + 1));
}

// The FreeParameter of a record term (split_model_key's pair), built once per key: pointers stay valid
// (std::map nodes do not move) and lookups from fit threads are serialised.
const FreeParameter* find_model_parameter(const std::string& dispatcher, const std::string& term) {
  static std::mutex mutex;
  static std::map<std::string, FreeParameter> built;
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string key = concat({dispatcher, ".", term});
  if (const auto it = built.find(key); it != built.end()) return &it->second;
  const ModelParam* m = record_term(dispatcher, term);
  if (m == nullptr) return nullptr;
  FreeParameter fp{m->name, m->unit, m->min, m->max, concat({"record term: ", m->source}), m->value};
  for (const LiveFitMeaning& known : kLiveFitMeanings) {
    if (term == known.term) {
      fp.meaning = known.meaning;
      fp.fit_start = known.fit_start;
    }
  }
  return &built.emplace(key, std::move(fp)).first->second;
}

// "<dispatcher>.<generic A2A key>" -> {dispatcher, generic key}; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_dispatcher_key(const std::string& key) {
  const std::size_t dot = key.rfind('.');
  if (dot == std::string::npos || dot == 0) return std::nullopt;
  const std::string leaf = key.substr(dot + 1);
  const std::vector<std::string>& leaves = a2a_parameter_leaves();
  if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) return std::nullopt;
  return std::make_pair(key.substr(0, dot), leaf);
}

ResidualSummary read_residuals(StrictTable t) {
  ResidualSummary r;
  r.rows = t.int32("rows", 0, 1000000);
  r.median_abs = t.number("median_abs_error", 0, 100);
  r.p90_abs = t.number("p90_abs_error", 0, 100);
  r.signed_p10 = t.number("signed_error_p10", -1, 100);
  r.signed_p90 = t.number("signed_error_p90", -1, 100);
  if (r.signed_p10 > r.signed_p90) {
    throw InputError(t.where("signed_error_p10"), t.name("signed_error_p10"), format_exact(r.signed_p10),
                     "<= signed_error_p90 (" + format_exact(r.signed_p90) + ")");
  }
  t.finish();
  return r;
}

// What validate --fit writes: "squared log ratio" or "huber <knee>" with a knee > 0 (format_exact).
bool is_fit_objective(const std::string& text) {
  if (text == "squared log ratio") return true;
  const std::string prefix = "huber ";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size()) return false;
  const std::string number = text.substr(prefix.size());
  char* end = nullptr;
  const double knee = std::strtod(number.c_str(), &end);
  return end == number.c_str() + number.size() && std::isfinite(knee) && knee > 0;
}

std::string residual_toml(const std::string& name, const std::string& comment, const ResidualSummary& r) {
  return "\n[" + name + "]  # " + comment + "\nrows = " + std::to_string(r.rows) +
         "\nmedian_abs_error = " + format_exact(r.median_abs) +
         "\np90_abs_error = " + format_exact(r.p90_abs) +
         "\nsigned_error_p10 = " + format_exact(r.signed_p10) +
         "\nsigned_error_p90 = " + format_exact(r.signed_p90) + "\n";
}

}  // namespace

const std::vector<std::string>& a2a_parameter_leaves() {
  static const std::vector<std::string> leaves = {"a2a_time_scale",     "a2a_latency_s",
                                                  "a2a_per_copy_s",     "a2a_fill_tokens",
                                                  "a2a_node_latency_s", "a2a_remote_token_s"};
  return leaves;
}

const std::vector<FreeParameter>& free_parameters() {
  return parameter_table();
}

const FreeParameter* find_free_parameter(const std::string& key) {
  if (stack_of_key(key)) return &stack_scale_parameter();
  if (const auto model = split_model_key(key)) return find_model_parameter(model->first, model->second);
  const auto split = split_dispatcher_key(key);
  const std::string generic = split ? split->second : key;
  for (const FreeParameter& p : parameter_table()) {
    if (p.key == generic) return &p;
  }
  return nullptr;
}

namespace {

// Where each parameter lives in SimProfile: one table instead of if-chains, so a new term is one line.
using ScalarField = double SimProfile::*;
using A2aField = double SimProfile::A2aFit::*;

ScalarField scalar_field(const std::string& key) {
  static const std::map<std::string, ScalarField> fields = {
      {"compute_time_scale", &SimProfile::compute_time_scale},
      {"launch_s", &SimProfile::launch_s},
      {"layer_host_s", &SimProfile::layer_host_s},
      {"moe_host_s", &SimProfile::moe_host_s},
      {"collective_time_scale", &SimProfile::collective_time_scale},
  };
  const auto it = fields.find(key);
  return it != fields.end() ? it->second : nullptr;
}

A2aField a2a_field(const std::string& leaf) {
  static const std::map<std::string, A2aField> fields = {
      {"a2a_time_scale", &SimProfile::A2aFit::time_scale},
      {"a2a_latency_s", &SimProfile::A2aFit::latency_s},
      {"a2a_per_copy_s", &SimProfile::A2aFit::per_copy_s},
      {"a2a_fill_tokens", &SimProfile::A2aFit::fill_tokens},
      {"a2a_node_latency_s", &SimProfile::A2aFit::node_latency_s},
      {"a2a_remote_token_s", &SimProfile::A2aFit::remote_token_s},
  };
  const auto it = fields.find(leaf);
  return it != fields.end() ? it->second : nullptr;
}

}  // namespace

double get_free_parameter(const SimProfile& p, const std::string& key) {
  if (const auto stack = stack_of_key(key)) {
    const auto it = p.stack_a2a_scale.find(*stack);
    return it != p.stack_a2a_scale.end() ? it->second : 1.0;
  }
  if (const auto model = split_model_key(key)) {
    const auto it = p.model_params.find(key);
    if (it != p.model_params.end()) return it->second;
    return record_term(model->first, model->second)->value;  // split_model_key found it
  }
  if (const auto split = split_dispatcher_key(key)) return p.a2a_for(split->first).*a2a_field(split->second);
  if (const A2aField f = a2a_field(key)) return p.generic_a2a.*f;
  if (const ScalarField f = scalar_field(key)) return p.*f;
  throw std::logic_error("unknown free parameter " + key);
}

void set_free_parameter(SimProfile& p, const std::string& key, double value) {
  if (const auto stack = stack_of_key(key)) {
    p.stack_a2a_scale[*stack] = value;
    return;
  }
  if (split_model_key(key)) {
    p.model_params[key] = value;
    return;
  }
  if (const auto split = split_dispatcher_key(key)) {
    // A dispatcher's first own term starts its set from the generic one.
    auto it = p.a2a_by_dispatcher.emplace(split->first, p.generic_a2a).first;
    it->second.*a2a_field(split->second) = value;
    return;
  }
  if (const A2aField f = a2a_field(key)) {
    p.generic_a2a.*f = value;
    return;
  }
  const ScalarField f = scalar_field(key);
  if (f == nullptr) throw std::logic_error("unknown free parameter " + key);
  p.*f = value;
  // Backward launches cost a fixed fraction of forward ones (kBackwardLaunchRatio says why).
  if (key == "launch_s") p.backward_launch_s = value * kBackwardLaunchRatio;
}

namespace {

// True for a catalog dispatcher of DeepEP's node-dedup kernel design (whatever its transport); false for
// others and for names the catalog lacks.
bool node_dedup_dispatcher(const std::string& name) {
  const DispatcherSpec* record = dispatcher_record(name);
  return record != nullptr && dedups_by_node(*record);
}

}  // namespace

// set_generic_a2a_from_dispatchers says why the DeepEP family's terms stand for each other.
std::vector<std::string> generic_a2a_source_names(const SimProfile& p) {
  const bool any_deepep = std::any_of(p.a2a_by_dispatcher.begin(), p.a2a_by_dispatcher.end(),
                                      [](const auto& entry) { return node_dedup_dispatcher(entry.first); });
  std::vector<std::string> names;
  for (const auto& entry : p.a2a_by_dispatcher) {
    if (!any_deepep || node_dedup_dispatcher(entry.first)) names.push_back(entry.first);
  }
  return names;
}

void set_generic_a2a_from_dispatchers(SimProfile& p) {
  std::vector<double> scales, latencies, per_copy, fill, node_latencies, remote_token;
  for (const std::string& name : generic_a2a_source_names(p)) {
    const SimProfile::A2aFit& a2a = p.a2a_by_dispatcher.at(name);
    scales.push_back(a2a.time_scale);
    latencies.push_back(a2a.latency_s);
    per_copy.push_back(a2a.per_copy_s);
    fill.push_back(a2a.fill_tokens);
    node_latencies.push_back(a2a.node_latency_s);
    remote_token.push_back(a2a.remote_token_s);
  }
  if (scales.empty()) return;
  p.generic_a2a = {median_of(scales), median_of(latencies),      median_of(per_copy),
                   median_of(fill),   median_of(node_latencies), median_of(remote_token)};
}

bool has_own_a2a_terms(const FittedProfile& profile, const std::string& dispatcher) {
  return profile.fitted && profile.sim.a2a_by_dispatcher.count(dispatcher) > 0;
}

std::string a2a_terms_label(const FittedProfile& profile, const std::string& dispatcher) {
  if (!profile.fitted) return "defaults";
  return has_own_a2a_terms(profile, dispatcher) ? "fitted" : "generic";
}

std::vector<std::pair<std::string, FittedProfile>> generic_a2a_sources(const FittedProfile& profile) {
  std::vector<std::pair<std::string, FittedProfile>> out;
  if (!profile.fitted) return out;
  for (const std::string& name : generic_a2a_source_names(profile.sim)) {
    FittedProfile variant = profile;
    variant.sim.generic_a2a = profile.sim.a2a_by_dispatcher.at(name);
    out.emplace_back(name, std::move(variant));
  }
  return out;
}

namespace {

// [coverage]: the values the fitted rows covered, dimension by dimension (novelty.hpp), and the rows.
void read_coverage(StrictTable& cov, const toml::table& root_table, FitCoverage& coverage) {
  const auto list = [&cov](const char* key) {
    return cov.has(key) ? cov.strings(key) : std::vector<std::string>{};
  };
  coverage.gpus = list("gpus");
  coverage.instances = list("instances");
  coverage.stacks = list("stacks");
  coverage.dispatchers = list("dispatchers");
  coverage.precisions = list("precisions");
  coverage.models = list("models");
  coverage.pp_regimes = list("pp_regimes");
  coverage.tps = list("tps");
  coverage.ep_spans = list("ep_spans");
  // Optional (profiles before routing was a dimension cover every routing).
  coverage.routings = list("routings");
  // Optional (profiles before joint novelty judge no combination and name no nearest rows).
  coverage.rows = list("rows");
  // Optional: absent = the fitted rows ran no recipe mechanism (FitCoverage::recipes: every profile written
  // before the key was fitted on such rows), so a scenario with one is new in the recipe dimension and its
  // band grows by the profile's prior for unmeasured dimensions (growth_per_unit) until a refit writes
  // [novelty_bands.recipe].
  coverage.recipes = list("recipes");
  // Optional: [coverage.model_shapes."<model>"] (profiles before distances: a new model is 1 unit away).
  const toml::table* raw_shapes = root_table["coverage"]["model_shapes"].as_table();
  if (std::optional<StrictTable> shapes = cov.table("model_shapes"); shapes && raw_shapes != nullptr) {
    for (const auto& entry : *raw_shapes) {
      const std::string name(entry.first.str());
      std::optional<StrictTable> t = shapes->table(name);
      if (!t) continue;
      ModelShape m;
      m.hidden = t->int32("hidden", 1, 1000000);
      m.expert_ffn_hidden = t->int32("expert_ffn_hidden", 0, 1000000);
      m.experts = t->int32("experts", 0, 1000000);
      m.top_k = t->int32("top_k", 0, 1000000);
      m.layers = t->int32("layers", 1, 1000000);
      m.attention = t->string("attention");
      t->finish();
      coverage.model_shapes[name] = m;
    }
    shapes->finish();
  }
  if (cov.has("nodes_min") || cov.has("nodes_max")) {
    const int lo = cov.int32("nodes_min", 1, 1000000);
    const int hi = cov.int32("nodes_max", lo, 1000000);
    coverage.nodes = lo == hi ? std::vector<int>{lo} : std::vector<int>{lo, hi};
  }
  cov.finish();
}

}  // namespace

FittedProfile load_fitted_profile(const std::string& path) {
  return parse_fitted_profile(read_text_file(path, input_kind::toml), path);
}

FittedProfile parse_fitted_profile(const std::string& text, const std::string& path) {
  const toml::table root_table = parse_toml(text, path);
  StrictTable root(root_table, path, "");
  FittedProfile p;
  p.path = path;
  p.fitted = true;
  p.schema_version = root.int32("schema_version", 1, kProfileSchemaVersion);
  if (p.schema_version < kProfileSchemaVersion) {
    throw InputError({path, 0}, "schema_version", std::to_string(p.schema_version),
                     "schema " + std::to_string(kProfileSchemaVersion) +
                         " (schema 1 scaled the dispatchers' handshake latency with a2a_time_scale; schema 2 "
                         "held the DeepEP terms on whatever instance the rows ran, not the reference "
                         "instance: refit with `moetwin validate --fit ... --write-profile`)");
  }
  p.fitted_at = root.string("fitted_at");
  p.fitted_on = root.string("fitted_on");
  p.git_revision = root.string("git_revision");
  p.cv_scheme = root.string("cv_scheme");
  p.fit_objective = root.string_or("fit_objective", p.fit_objective);
  // Optional (profiles before the flow model were all fitted under the closed form).
  if (const std::optional<NetworkMode> mode =
          network_mode_from_string(root.string_or("network", "closed-form"))) {
    p.sim.network = *mode;
  } else {
    throw InputError(root.where("network"), root.name("network"), quoted_string(root.string("network")),
                     "\"closed-form\" or \"flow\" (the network model the profile was fitted under)");
  }
  if (!is_fit_objective(p.fit_objective)) {
    throw InputError(root.where("fit_objective"), root.name("fit_objective"), quoted_string(p.fit_objective),
                     "\"squared log ratio\" or \"huber <knee > 0>\" (what validate --fit writes)");
  }
  {
    std::optional<StrictTable> params = root.table("parameters");
    if (!params) throw InputError({path, 0}, "parameters", "", "a [parameters] table");
    for (const FreeParameter& fp : parameter_table()) {
      if (!params->has(fp.key)) continue;
      set_free_parameter(p.sim, fp.key, params->number(fp.key, fp.lo, fp.hi));
      p.fitted_keys.push_back(fp.key);
    }
    // [parameters.dispatchers."<name>"]: a dispatcher's own A2A terms.
    const toml::table* raw = root_table["parameters"]["dispatchers"].as_table();
    if (std::optional<StrictTable> dispatchers = params->table("dispatchers");
        dispatchers && raw != nullptr) {
      for (const auto& entry : *raw) {
        const std::string name(entry.first.str());
        std::optional<StrictTable> d = dispatchers->table(name);
        if (!d) continue;
        for (const std::string& leaf : a2a_parameter_leaves()) {
          const FreeParameter* fp = find_free_parameter(leaf);
          // Profiles written before a2a_per_copy_s / a2a_fill_tokens / a2a_node_latency_s /
          // a2a_remote_token_s existed leave them at 0.
          if (leaf != "a2a_time_scale" && leaf != "a2a_latency_s" && !d->has(leaf)) continue;
          set_free_parameter(p.sim, name + "." + leaf, d->number(leaf, fp->lo, fp->hi));
          p.fitted_keys.push_back(name + "." + leaf);
        }
        // Record terms the fit moved (net_chunk_s, ...), in the record's order.
        if (const DispatcherSpec* record = dispatcher_record(name)) {
          for (const ModelParam& term : record->terms) {
            if (!d->has(term.name)) continue;
            set_free_parameter(p.sim, name + "." + term.name, d->number(term.name, term.min, term.max));
            p.fitted_keys.push_back(name + "." + term.name);
          }
        }
        d->finish();
      }
      dispatchers->finish();
    }
    // [parameters.stacks."<name>"]: terms fitted on one software stack's rows.
    const toml::table* raw_stacks = root_table["parameters"]["stacks"].as_table();
    if (std::optional<StrictTable> stacks = params->table("stacks"); stacks && raw_stacks != nullptr) {
      for (const auto& entry : *raw_stacks) {
        const std::string name(entry.first.str());
        std::optional<StrictTable> st = stacks->table(name);
        if (!st) continue;
        const FreeParameter& sp = stack_scale_parameter();
        set_free_parameter(p.sim, name + "." + sp.key, st->number(sp.key, sp.lo, sp.hi));
        p.fitted_keys.push_back(name + "." + sp.key);
        st->finish();
      }
      stacks->finish();
    }
    params->finish();
  }
  std::optional<StrictTable> in_sample = root.table("in_sample");
  std::optional<StrictTable> cv = root.table("cross_validated");
  if (!in_sample) throw InputError({path, 0}, "in_sample", "", "an [in_sample] table");
  if (!cv) throw InputError({path, 0}, "cross_validated", "", "a [cross_validated] table");
  p.in_sample = read_residuals(std::move(*in_sample));
  p.cross_validated = read_residuals(std::move(*cv));
  // [cross_validated_novel] (profiles written before [novelty_bands]): the held-out rows of campaigns new in
  // GPU, instance, stack or precision; read as those four dimensions' band.
  if (std::optional<StrictTable> legacy = root.table("cross_validated_novel")) {
    const ResidualSummary r = read_residuals(std::move(*legacy));
    if (r.rows > 0) {
      for (const char* d : {"gpu", "instance", "stack", "precision"}) {
        p.novelty_bands[d] = {r.rows, -std::min(r.p90_abs, 0.95), r.p90_abs,
                              concat({"measured: p90 |error| of ", std::to_string(r.rows),
                                      " held-out rows new in GPU, instance, stack or precision "
                                      "([cross_validated_novel] of an older profile)"}),
                              -1};
      }
    }
  }
  // [novelty_bands.<dimension>]: one table per banded novelty dimension.
  const toml::table* raw_bands = root_table["novelty_bands"].as_table();
  if (std::optional<StrictTable> bands = root.table("novelty_bands"); bands && raw_bands != nullptr) {
    for (const NoveltyDimension d : banded_novelty_dimensions()) {
      std::optional<StrictTable> t = bands->table(to_string(d));
      if (!t) continue;
      NoveltyBand b;
      b.rows = t->int32("rows", 0, 1000000);
      b.error_lo = t->number("error_lo", -0.95, 0);
      b.error_hi = t->number("error_hi", 0, 100);
      b.source = t->string("source");
      // Optional: profiles written before distances read their band as one unit's (NoveltyBand).
      if (t->has("per_unit")) b.per_unit = t->number("per_unit", 0, 10);
      if (t->has("groups")) b.groups = t->int32("groups", 0, 1000000);
      t->finish();
      p.novelty_bands[to_string(d)] = std::move(b);
    }
    bands->finish();
  }
  // [campaign_band] (optional: profiles before it take the cross-validated quantiles as their band).
  if (std::optional<StrictTable> t = root.table("campaign_band")) {
    NoveltyBand& b = p.campaign_band;
    b.rows = t->int32("rows", 0, 1000000);
    b.error_lo = t->number("error_lo", -0.95, 0);
    b.error_hi = t->number("error_hi", 0, 100);
    b.source = t->string("source");
    b.per_unit = t->number("per_unit", 0, 10);
    t->finish();
  }
  const auto read_margin = [&root](const char* table, MarginResidualSummary& m) {
    std::optional<StrictTable> margin = root.table(table);
    if (!margin) return;
    m.pairs = margin->int32("pairs", 0, 1000000);
    m.median_abs = margin->number("median_abs_error", 0, 100);
    m.p90_abs = margin->number("p90_abs_error", 0, 100);
    if (m.median_abs > m.p90_abs) {
      throw InputError(margin->where("median_abs_error"), margin->name("median_abs_error"),
                       format_exact(m.median_abs), "<= p90_abs_error (" + format_exact(m.p90_abs) + ")");
    }
    margin->finish();
  };
  read_margin("cross_validated_margin", p.cross_validated_margin);
  read_margin("in_sample_margin", p.in_sample_margin);
  if (std::optional<StrictTable> cov = root.table("coverage")) read_coverage(*cov, root_table, p.coverage);
  root.finish();
  return p;
}

namespace {

std::string toml_array(const std::vector<std::string>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + quoted_string(values[i]);
  return out + "]";
}

}  // namespace

Novelty novelty_of(const Scenario& s, const FittedProfile& profile) {
  if (!profile.fitted) return {};
  return novelty_of(s, profile.coverage);
}

std::vector<std::string> coverage_warnings(const Scenario& s, const FittedProfile& profile) {
  return novelty_of(s, profile).warnings();
}

std::string default_fitted_profile_path() {
  if (const char* env = std::getenv("MOETWIN_PROFILE"); env != nullptr && *env != '\0') return env;
  return MOETWIN_DEFAULT_PROFILE;
}

FittedProfile resolve_fitted_profile(const std::string& spec) {
  if (spec == "none") return FittedProfile{};
  if (spec.empty()) {
    const std::string path = default_fitted_profile_path();
    if (!std::filesystem::exists(path)) return FittedProfile{};
    return load_fitted_profile(path);
  }
  if (!std::filesystem::exists(spec))
    throw InputError({"", 0}, "--profile", spec, "an existing profile file or none");
  return load_fitted_profile(spec);
}

std::string fitted_profile_toml(const FittedProfile& p) {
  std::string s =
      "# moetwin fitted profile (written by `moetwin validate --fit`; format: sim/include/moetwin/sim/"
      "fitted_profile.hpp).\n# The twin's free parameters fitted against measured iteration times, and the "
      "residuals that\n# give every prediction its uncertainty band.\n";
  s += "schema_version = " + std::to_string(kProfileSchemaVersion) + "\n";
  s += "fitted_at = " + quoted_string(p.fitted_at) + "\n";
  s += "fitted_on = " + quoted_string(p.fitted_on) + "\n";
  s += "git_revision = " + quoted_string(p.git_revision) + "\n";
  s += "cv_scheme = " + quoted_string(p.cv_scheme) + "\n";
  s += "fit_objective = " + quoted_string(p.fit_objective) + "\n";
  s += "network = " + quoted_string(to_string(p.sim.network)) + "\n";
  s += "\n[parameters]\n";
  for (const FreeParameter& fp : parameter_table()) {
    s += fp.key + " = " + format_exact(get_free_parameter(p.sim, fp.key)) + "  # " + fp.unit + ", bounds [" +
         format_exact(fp.lo) + ", " + format_exact(fp.hi) + "]: " + fp.meaning + "\n";
  }
  for (const auto& [name, a2a] : p.sim.a2a_by_dispatcher) {
    s += "\n[parameters.dispatchers." + quoted_string(name) +
         "]  # this dispatcher's A2A terms (the generic terms above serve dispatchers without runs)\n" +
         "a2a_time_scale = " + format_exact(a2a.time_scale) +
         "\na2a_latency_s = " + format_exact(a2a.latency_s) +
         "\na2a_per_copy_s = " + format_exact(a2a.per_copy_s) +
         "\na2a_fill_tokens = " + format_exact(a2a.fill_tokens) +
         "\na2a_node_latency_s = " + format_exact(a2a.node_latency_s) +
         "\na2a_remote_token_s = " + format_exact(a2a.remote_token_s) + "\n";
    for (const auto& [key, value] : p.sim.model_params) {
      const auto model = split_model_key(key);
      if (!model || model->first != name) continue;
      const FreeParameter& mp = *find_model_parameter(model->first, model->second);
      s += mp.key + " = " + format_exact(value) + "  # " + mp.unit + ", bounds [" + format_exact(mp.lo) +
           ", " + format_exact(mp.hi) + "]: " + mp.meaning + "\n";
    }
  }
  for (const auto& [name, scale] : p.sim.stack_a2a_scale) {
    const FreeParameter& sp = stack_scale_parameter();
    s += "\n[parameters.stacks." + quoted_string(name) +
         "]  # terms fitted on this software stack's rows only\n" + sp.key + " = " + format_exact(scale) +
         "  # " + sp.unit + ", bounds [" + format_exact(sp.lo) + ", " + format_exact(sp.hi) +
         "]: " + sp.meaning + "\n";
  }
  s += residual_toml("in_sample", "relative error (predicted - measured) / measured, fitted on every row",
                     p.in_sample);
  s += residual_toml("cross_validated", "out of sample: each row predicted by the fit without its group",
                     p.cross_validated);
  if (!p.novelty_bands.empty()) {
    s += "\n# Growth of the 80% band per unit of distance in each novelty dimension (per_unit: log "
         "half-width\n"
         "# per unit, combined in quadrature; error_lo / error_hi: one unit alone): measured on held-out\n"
         "# campaigns that were new in it, or a stated prior.\n";
    for (const auto& [dimension, b] : p.novelty_bands) {
      s += "[novelty_bands." + dimension + "]\nrows = " + std::to_string(b.rows) +
           "\nerror_lo = " + format_exact(b.error_lo) + "\nerror_hi = " + format_exact(b.error_hi) +
           "\nsource = " + quoted_string(b.source) + "\n";
      if (b.per_unit >= 0) s += "per_unit = " + format_exact(b.per_unit) + "\n";
      if (b.groups >= 0) s += "groups = " + std::to_string(b.groups) + "\n";
    }
  }
  if (p.campaign_band.per_unit >= 0) {
    const NoveltyBand& b = p.campaign_band;
    s += "\n[campaign_band]  # what a new campaign adds at distance 0, in quadrature with the in-sample "
         "quantiles\n# (per_unit: log half-width; error_lo / error_hi: it alone)\nrows = " +
         std::to_string(b.rows) + "\nerror_lo = " + format_exact(b.error_lo) +
         "\nerror_hi = " + format_exact(b.error_hi) + "\nsource = " + quoted_string(b.source) +
         "\nper_unit = " + format_exact(b.per_unit) + "\n";
  }
  if (!p.coverage.empty()) {
    s += "\n[coverage]  # what the fitted rows covered: a prediction outside it says so\ngpus = " +
         toml_array(p.coverage.gpus) + "\ninstances = " + toml_array(p.coverage.instances) +
         "\nstacks = " + toml_array(p.coverage.stacks) +
         "\ndispatchers = " + toml_array(p.coverage.dispatchers) +
         "\nprecisions = " + toml_array(p.coverage.precisions) +
         "\nmodels = " + toml_array(p.coverage.models) +
         "\npp_regimes = " + toml_array(p.coverage.pp_regimes) + "\ntps = " + toml_array(p.coverage.tps) +
         "\nep_spans = " + toml_array(p.coverage.ep_spans) +
         "\nroutings = " + toml_array(p.coverage.routings) + "\n";
    if (!p.coverage.recipes.empty()) s += "recipes = " + toml_array(p.coverage.recipes) + "\n";
    if (!p.coverage.rows.empty()) {
      s += "rows = [  # each fitted row's values on every axis: combinations and nearest rows\n";
      for (const std::string& r : p.coverage.rows) s += "  " + quoted_string(r) + ",\n";
      s += "]\n";
    }
    if (!p.coverage.nodes.empty()) {
      s += "nodes_min = " + std::to_string(p.coverage.nodes.front()) +
           "\nnodes_max = " + std::to_string(p.coverage.nodes.back()) + "\n";
    }
    for (const auto& [name, m] : p.coverage.model_shapes) {
      s += "[coverage.model_shapes." + quoted_string(name) + "]  # size and shape: a new model's distance\n" +
           "hidden = " + std::to_string(m.hidden) +
           "\nexpert_ffn_hidden = " + std::to_string(m.expert_ffn_hidden) +
           "\nexperts = " + std::to_string(m.experts) + "\ntop_k = " + std::to_string(m.top_k) +
           "\nlayers = " + std::to_string(m.layers) + "\nattention = " + quoted_string(m.attention) + "\n";
    }
  }
  const auto margin_toml = [&s](const char* table, const char* scope, const MarginResidualSummary& m) {
    if (m.pairs == 0) return;
    s +=
        concat({"\n[", table, "]  # ", scope,
                ": exp(|ln predicted - ln measured time ratio|) - 1 of every pair of dispatchers measured on "
                "one cell\npairs = ",
                std::to_string(m.pairs), "\nmedian_abs_error = ", format_exact(m.median_abs),
                "\np90_abs_error = ", format_exact(m.p90_abs), "\n"});
  };
  margin_toml("cross_validated_margin", "out of sample", p.cross_validated_margin);
  margin_toml("in_sample_margin", "in sample", p.in_sample_margin);
  return s;
}

}  // namespace moetwin
