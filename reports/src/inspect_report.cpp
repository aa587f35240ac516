#include "moetwin/reports/inspect_report.hpp"

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

std::string gib(double bytes) {
  return format_fixed(bytes / kGiB, 2);
}
Cell gib_cell(double bytes) {
  return Cell::fixed(bytes / kGiB, 3);
}

// "E+8D", "4D", "1D+MTP+Loss": the markers of model-flops.md for one chunk.
std::string chunk_text(const PipelineChunk& chunk) {
  PipelineLayout one;
  one.chunks = {chunk};
  return describe(one);
}

std::string stage_chunks(const PipelineLayout& layout, int stage) {
  std::string out;
  for (int v = 0; v < layout.vpp; ++v) out += (v ? " | " : "") + chunk_text(layout.chunk(stage, v));
  return out;
}

std::string billions(std::int64_t n) {
  return format_fixed(static_cast<double>(n) / 1e9, 2) + " B";
}

std::string scenario_layout_text(const Scenario& s) {
  const ParallelLayout& p = s.parallel;
  return "TP" + std::to_string(p.tp) + " PP" + std::to_string(p.pp) + " VPP" + std::to_string(p.vpp) + " EP" +
         std::to_string(p.ep) + " ETP" + std::to_string(p.etp) + " DP" + std::to_string(p.dp) + " CP" +
         std::to_string(p.cp) + " (expert data parallel " + std::to_string(p.edp()) + ")";
}

}  // namespace

Inspection inspect_scenario(const Scenario& scenario, const InputLocation& where) {
  Inspection in;
  in.params = count_parameters(scenario.model, scenario.parallel.tp);
  in.params_total = in.params.total();
  in.params_active = in.params.active(scenario.model);
  in.flops = model_flops(scenario);
  in.layout = make_pipeline_layout(scenario.model, scenario.parallel, where);
  in.memory = estimate_memory(scenario, in.layout);
  return in;
}

std::vector<std::string> inspect_columns() {
  return {"params_total",    "params_active",      "flops_per_token", "model_flops_per_iter",
          "pipeline_layout", "worst_stage",        "weights_gib",     "gradients_gib",
          "optimizer_gib",   "activations_gib",    "logits_gib",      "dispatcher_gib",
          "reserve_gib",     "memory_per_gpu_gib", "hbm_gib",         "fits"};
}

std::vector<Cell> inspect_cells(const Inspection& in) {
  const StageMemory& w = in.memory.worst();
  return {Cell::integer(in.params_total),
          Cell::integer(in.params_active),
          Cell::fixed(in.flops.per_token.total(), 0),
          Cell::fixed(in.flops.per_iteration, 0),
          describe(in.layout),
          Cell::integer(in.memory.worst_stage),
          gib_cell(w.weights),
          gib_cell(w.gradients),
          gib_cell(w.optimizer),
          gib_cell(w.activations),
          gib_cell(w.logits),
          gib_cell(w.dispatcher),
          gib_cell(w.reserve),
          gib_cell(w.total()),
          gib_cell(in.memory.hbm_bytes),
          Cell::boolean(in.memory.fits)};
}

ResultTable inspect_scenario_table(const Scenario& s, const Inspection& in) {
  ResultTable t;
  t.columns = {"name", "source", "model",  "instance",   "nodes",     "gpus",    "tp",
               "pp",   "vpp",    "ep",     "etp",        "dp",        "cp",      "mb",
               "gbs",  "seq",    "layers", "mtp_layers", "recompute", "overlap", "dispatcher"};
  std::vector<Cell> row = {s.name,
                           s.source,
                           s.model.name,
                           s.instance.name,
                           Cell::integer(s.nodes),
                           Cell::integer(s.gpus()),
                           Cell::integer(s.parallel.tp),
                           Cell::integer(s.parallel.pp),
                           Cell::integer(s.parallel.vpp),
                           Cell::integer(s.parallel.ep),
                           Cell::integer(s.parallel.etp),
                           Cell::integer(s.parallel.dp),
                           Cell::integer(s.parallel.cp),
                           Cell::integer(s.training.micro_batch),
                           Cell::integer(s.training.global_batch),
                           Cell::integer(s.training.seq_length),
                           Cell::integer(s.model.layers),
                           Cell::integer(s.model.mtp_layers),
                           to_string(s.training.recompute),
                           s.training.overlap_moe_a2a ? "on" : "off",
                           s.dispatcher.name};
  for (const std::string& c : inspect_columns()) t.columns.push_back(c);
  for (Cell& c : inspect_cells(in)) row.push_back(std::move(c));
  t.add_row(std::move(row));
  return t;
}

ResultTable inspect_runs_table(const LiveRunTable& runs, const std::vector<Inspection>& inspections) {
  ResultTable t;
  t.columns = runs.header;
  for (const std::string& c : inspect_columns()) t.columns.push_back(c);
  t.columns.push_back("logged_flops_per_iter");
  t.columns.push_back("flops_vs_logged_pct");
  for (std::size_t i = 0; i < runs.runs.size(); ++i) {
    const LiveRun& run = runs.runs[i];
    std::vector<Cell> row;
    for (const std::string& field : run.row.fields) row.emplace_back(field);
    for (Cell& c : inspect_cells(inspections.at(i))) row.push_back(std::move(c));
    const double logged = run.tflops_gpu * 1e12 * run.iter_s * run.scenario.gpus();
    row.push_back(Cell::fixed(logged, 0));
    row.push_back(logged > 0 ? Cell::fixed(100.0 * (inspections[i].flops.per_iteration / logged - 1.0), 2)
                             : Cell("nan"));
    t.add_row(std::move(row));
  }
  return t;
}

ResultTable stage_table(const Inspection& in) {
  ResultTable t;
  t.columns = {"stage",          "chunks",      "dense_params",  "expert_params",   "in_flight",
               "weights_gib",    "grads_gib",   "optimizer_gib", "activations_gib", "logits_gib",
               "dispatcher_gib", "reserve_gib", "total_gib"};
  for (const StageMemory& s : in.memory.stages) {
    t.add_row({Cell::integer(s.stage), stage_chunks(in.layout, s.stage), Cell::integer(s.dense_params),
               Cell::integer(s.expert_params), Cell::integer(s.in_flight.total()), gib_cell(s.weights),
               gib_cell(s.gradients), gib_cell(s.optimizer), gib_cell(s.activations), gib_cell(s.logits),
               gib_cell(s.dispatcher), gib_cell(s.reserve), gib_cell(s.total())});
  }
  return t;
}

std::string render_inspect_text(const Scenario& s, const Inspection& in) {
  const ModelSpec& m = s.model;
  const ParameterCounts& p = in.params;
  const TokenFlops& f = in.flops.per_token;
  const StageMemory& w = in.memory.worst();
  const int moe_layers = m.experts > 0 ? std::max(0, m.layers - m.dense_layers) : 0;
  std::string model = m.name + ": " + std::to_string(m.layers) + " layers (" +
                      std::to_string(m.layers - moe_layers) + " dense, " + std::to_string(moe_layers) +
                      " MoE)";
  if (m.mtp_layers > 0) model += " + " + std::to_string(m.mtp_layers) + " MTP";
  model += ", hidden " + std::to_string(m.hidden) + ", " + to_string(m.attention) + " " +
           std::to_string(m.heads) + " heads";
  if (m.experts > 0) model += ", " + std::to_string(m.experts) + " experts top-" + std::to_string(m.top_k);

  std::vector<std::pair<std::string, std::string>> lines = {
      {"scenario", s.name + " (" + s.source + ")"},
      {"description", s.description},
      {"model", model},
      {"cluster", std::to_string(s.nodes) + " x " + s.instance.name + " = " + std::to_string(s.gpus()) +
                      " x " + s.gpu.name + ", " + format_fixed(s.gpu.hbm_bytes / kGB, 0) + " GB HBM each"},
      {"parallelism", scenario_layout_text(s)},
      {"training",
       "mb " + std::to_string(s.training.micro_batch) + ", gbs " + std::to_string(s.training.global_batch) +
           " (" + std::to_string(s.training.microbatches(s.parallel)) + " microbatches per pipeline), seq " +
           std::to_string(s.training.seq_length) + ", recompute " + to_string(s.training.recompute) +
           ", overlap " + (s.training.overlap_moe_a2a ? "on" : "off") + ", dispatcher " + s.dispatcher.name},
      {"", ""},
      {"parameters",
       "total " + billions(in.params_total) + ", active per token " + billions(in.params_active)},
      {"  by part", "embedding " + billions(p.embedding) + ", output " + billions(p.output_layer) +
                        ", attention " + billions(p.attention) + ", dense MLP " + billions(p.dense_mlp) +
                        ", routed experts " + billions(p.routed_experts) + ", shared experts " +
                        billions(p.shared_experts) + ", routers " + billions(p.router) + ", MTP " +
                        billions(p.mtp)},
      {"model FLOPs", format_fixed(f.total() / 1e9, 1) + " GFLOP/token (attention " +
                          format_fixed(f.attention / 1e9, 1) + ", MLP " + format_fixed(f.mlp / 1e9, 1) +
                          ", MTP " + format_fixed(f.mtp / 1e9, 1) + ", logits " +
                          format_fixed(f.logits / 1e9, 1) + ")"},
      {"  per iteration", format_significant(in.flops.per_iteration, 6) + " FLOP (" +
                              format_fixed(in.flops.tokens, 0) +
                              " tokens; Megatron-Core accounting, recompute not counted)"},
      {"", ""},
      {"pipeline", describe(in.layout) + " (rule " + in.layout.rule + ")"},
  };
  if (s.description.empty()) lines.erase(lines.begin() + 1);
  std::string out = render_key_values(lines);
  out += "\nper pipeline stage, one GPU (GiB):\n";
  out += render_text(stage_table(in));
  const std::vector<std::pair<std::string, std::string>> memory = {
      {"memory per GPU", gib(w.total()) + " GiB on stage " + std::to_string(in.memory.worst_stage) +
                             " (the most loaded), HBM " + gib(in.memory.hbm_bytes) +
                             " GiB: " + (in.memory.fits ? "fits" : "DOES NOT FIT")},
      {"  breakdown", "weights " + gib(w.weights) + ", gradients " + gib(w.gradients) + ", optimizer " +
                          gib(w.optimizer) + ", activations " + gib(w.activations) + " (" +
                          std::to_string(w.in_flight.total()) + " chunk-microbatches in flight), logits " +
                          gib(w.logits) + ", dispatcher " + gib(w.dispatcher) +
                          (w.fp8 > 0 ? concat({", FP8 weight copies ", gib(w.fp8)}) : std::string()) +
                          ", reserve " + gib(w.reserve)},
  };
  // Not "\n" + render_key_values(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
  out.append("\n").append(render_key_values(memory));
  return out;
}

}  // namespace moetwin
