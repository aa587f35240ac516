// Internal: the cross-field rules of a scenario, shared by the TOML parser, the live-run CSV reader and
// validate_scenario. The rules are the same everywhere; only the key names ("parallelism.tp" in TOML,
// "tp" in CSV) and the lines in messages differ, so the caller says how to name each field.
#pragma once

#include <map>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin::detail {

// Every scenario field a rule can blame.
enum class Field {
  model,
  layers,
  dense_layers,
  heads,
  query_groups,
  experts,
  expert_ffn_hidden,
  top_k,
  router_groups,
  router_topk_groups,
  instance,
  nodes,
  tp,
  pp,
  vpp,
  ep,
  etp,
  cp,
  dp,
  pipeline_layout,
  micro_batch,
  global_batch,
  seq_length,
  recompute,
  overlap_moe_a2a,
  dispatcher,
  routing_kind,
  zipf_exponent,
  histogram,
  precision,
  cuda_graphs,
  tp_comm_overlap,
  megatron_fsdp,
  cpu_offload_layers,
  delay_wgrad_compute,
};

// How to name a field in a message and where it was written.
struct FieldNames {
  bool csv = false;                      // CSV column names instead of TOML dotted keys
  InputLocation fallback;                // location of fields not in `lines`
  std::map<Field, InputLocation> lines;  // TOML: line of each key as written (or of its table)

  std::string key(Field field) const;
  InputLocation where(Field field) const;
  std::string flag(bool on) const { return csv ? (on ? "on" : "off") : (on ? "true" : "false"); }
};

// Throws InputError for the first rule the scenario breaks (rules in the order of scenarios/README.md).
void check_scenario_rules(const Scenario& scenario, const FieldNames& names);

}  // namespace moetwin::detail
