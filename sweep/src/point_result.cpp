// Evaluation of one sweep point into its result row. Column meanings are listed once, here, and rendered
// into sweep/README.md and the HDF5 attributes.
#include "moetwin/sweep/point_result.hpp"

#include <exception>
#include <stdexcept>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/sweep/grid.hpp"

namespace moetwin {
namespace {

using T = ColumnType;

std::vector<SweepColumn> make_columns() {
  std::vector<SweepColumn> c = {
      {"point", T::integer, 0, "", "point id: index in the grid's expansion order"},
      {"status", T::text, 0, "", "ok | invalid | failed"},
      {"error", T::text, 0, "", "why the point is invalid or failed (\"\" when ok)"},
      {"scenario", T::text, 0, "", "scenario name: <sweep name>/<point>"},
      {"model", T::text, 0, "", "catalog model"},
      {"layers", T::integer, 0, "",
       "decoder layers (with the base's override when the model axis is absent)"},
      {"instance", T::text, 0, "", "catalog instance"},
      {"gpu", T::text, 0, "", "the instance's GPU"},
      {"nodes", T::integer, 0, "", "nodes"},
      {"gpus", T::integer, 0, "", "world size: nodes x GPUs per node"},
      {"tp", T::integer, 0, "", "tensor parallel"},
      {"pp", T::integer, 0, "", "pipeline parallel"},
      {"vpp", T::integer, 0, "", "virtual pipeline chunks per stage"},
      {"ep", T::integer, 0, "", "expert parallel"},
      {"etp", T::integer, 0, "", "expert tensor parallel"},
      {"cp", T::integer, 0, "", "context parallel"},
      {"dp", T::integer, 0, "", "data parallel, gpus / (tp * pp * cp) (\"\" when not an integer)"},
      {"micro_batch", T::integer, 0, "", "sequences per microbatch"},
      {"global_batch", T::integer, 0, "", "sequences per iteration"},
      {"seq_length", T::integer, 0, "", "tokens per sequence"},
      {"recompute", T::text, 0, "", "none | selective | full"},
      {"bf16", T::boolean, 0, "", "BF16 mixed precision"},
      {"distributed_optimizer", T::boolean, 0, "", "optimizer state sharded over dp"},
      {"overlap_moe_a2a", T::boolean, 0, "", "Megatron overlap_moe_expert_parallel_comm"},
      {"overlap_grad_reduce", T::boolean, 0, "", "DP reduce-scatter overlapped with backward"},
      {"overlap_param_gather", T::boolean, 0, "", "DP all-gather overlapped with forward"},
      {"dispatcher", T::text, 0, "", "token dispatcher"},
      {"routing", T::text, 0, "", "balanced | zipf | group-limited | histogram"},
      {"zipf_exponent", T::real, 3, "", "zipf exponent s (\"\" unless routing = zipf)"},
      {"histogram", T::text, 0, "", "histogram file (\"\" unless routing = histogram)"},
      {"routing_seed", T::integer, 0, "", "root seed of the routing streams"},
      {"calibration_profile", T::text, 0, "", "the scenario's [calibration] profile (\"\" = default)"},
      {"iteration_s", T::real, 6, "s", "predicted iteration time"},
      {"predicted_lo_s", T::real, 6, "s",
       "80% interval of the measured iteration time, low end (\"\" when the profile gives none; widened at "
       "the "
       "point's novelty; for a dispatcher without live runs it spans its predictions with each measured "
       "relative's A2A terms)"},
      {"predicted_hi_s", T::real, 6, "s", "80% interval, high end (\"\" when the profile gives none)"},
      {"novelty_level", T::text, 0, "",
       "covered | configuration (new model, layout regime or scale) | platform (new GPU, instance, stack or "
       "precision): which band the interval is"},
      {"novelty", T::text, 0, "",
       "dimension=value;... the fitted profile has no live runs of (\"\": covered)"},
      {"a2a_terms", T::text, 0, "",
       "whose A2A terms the prediction used: fitted (the dispatcher's own, from its live runs) | generic "
       "(no live runs: the median of the measured DeepEP transports' terms) | defaults (unfitted profile)"},
      {"tokens_s", T::real, 1, "tokens/s", "global batch x sequence length / iteration time"},
      {"tflops_gpu", T::real, 2, "TFLOP/s", "model TFLOP/s per GPU (Megatron accounting)"},
      {"microbatches", T::integer, 0, "", "microbatches per iteration per pipeline"},
      {"critical_rank", T::integer, 0, "", "rank whose last op ends the iteration"},
      {"critical_stage", T::integer, 0, "", "pipeline stage of the critical rank"},
      {"compute_s_median", T::real, 6, "s", "compute time, median over ranks"},
      {"compute_s_max", T::real, 6, "s", "compute time, max over ranks"},
      {"exposed_tp_s_max", T::real, 6, "s", "exposed TP communication, max over ranks"},
      {"exposed_ep_s_max", T::real, 6, "s", "exposed EP (all-to-all) communication, max over ranks"},
      {"exposed_pp_s_max", T::real, 6, "s", "exposed PP send/recv, max over ranks"},
      {"exposed_dp_s_max", T::real, 6, "s", "exposed DP communication, max over ranks"},
      {"host_wait_s_max", T::real, 6, "s", "GPU waiting on the host's kernel issue, max over ranks"},
      {"bubble_s_max", T::real, 6, "s", "pipeline bubble, max over ranks"},
      {"idle_s_max", T::real, 6, "s", "other idle time, max over ranks"},
      {"memory_gib", T::real, 3, "GiB", "memory per GPU of the most loaded pipeline stage"},
      {"memory_stage", T::integer, 0, "", "that stage"},
      {"hbm_gib", T::real, 3, "GiB", "HBM per GPU (catalog)"},
      {"fits", T::boolean, 0, "", "memory_gib <= hbm_gib"},
  };
  return c;
}

std::string integer(long long v) {
  return std::to_string(v);
}
std::string boolean(bool v) {
  return v ? "true" : "false";
}

// Fills the scenario's cells of `row`.
void put_scenario(const Scenario& s, std::vector<std::string>& row) {
  const auto put = [&row](const char* column, std::string value) {
    row[sweep_column(column)] = std::move(value);
  };
  put("scenario", s.name);
  put("model", s.model.name);
  put("layers", integer(s.model.layers));
  put("instance", s.instance.name);
  put("gpu", s.gpu.name);
  put("nodes", integer(s.nodes));
  put("gpus", integer(s.gpus()));
  put("tp", integer(s.parallel.tp));
  put("pp", integer(s.parallel.pp));
  put("vpp", integer(s.parallel.vpp));
  put("ep", integer(s.parallel.ep));
  put("etp", integer(s.parallel.etp));
  put("cp", integer(s.parallel.cp));
  put("dp", s.parallel.dp > 0 ? integer(s.parallel.dp) : "");
  put("micro_batch", integer(s.training.micro_batch));
  put("global_batch", integer(s.training.global_batch));
  put("seq_length", integer(s.training.seq_length));
  put("recompute", to_string(s.training.recompute));
  put("bf16", boolean(s.training.bf16));
  put("distributed_optimizer", boolean(s.training.distributed_optimizer));
  put("overlap_moe_a2a", boolean(s.training.overlap_moe_a2a));
  put("overlap_grad_reduce", boolean(s.training.overlap_grad_reduce));
  put("overlap_param_gather", boolean(s.training.overlap_param_gather));
  put("dispatcher", s.dispatcher.name);
  put("routing", to_string(s.routing.kind));
  put("zipf_exponent", s.routing.kind == RoutingKind::zipf ? format_exact(s.routing.zipf_exponent) : "");
  put("histogram", s.routing.histogram_path);
  put("routing_seed", std::to_string(s.routing.seed));
  put("calibration_profile", s.calibration_profile);
}

void put_memory(const MemoryEstimate& m, std::vector<std::string>& row) {
  row[sweep_column("memory_gib")] = format_exact(m.worst().total() / kGiB);
  row[sweep_column("memory_stage")] = integer(m.worst_stage);
  row[sweep_column("hbm_gib")] = format_exact(m.hbm_bytes / kGiB);
  row[sweep_column("fits")] = boolean(m.fits);
}

void put_prediction(const Prediction& p, std::vector<std::string>& row) {
  const auto put = [&row](const char* column, std::string value) {
    row[sweep_column(column)] = std::move(value);
  };
  put("iteration_s", format_exact(p.iteration_s));
  put("tokens_s", format_exact(p.tokens_per_s));
  put("tflops_gpu", format_exact(p.model_tflops_per_gpu));
  put("microbatches", integer(p.microbatches));
  put("critical_rank", integer(p.critical_rank));
  put("critical_stage", integer(p.critical_stage));
  put("compute_s_median", format_exact(p.compute.median_s));
  put("compute_s_max", format_exact(p.compute.max_s));
  const char* exposed[kCommClasses] = {"exposed_tp_s_max", "exposed_ep_s_max", "exposed_pp_s_max",
                                       "exposed_dp_s_max"};
  for (int k = 0; k < kCommClasses; ++k) put(exposed[k], format_exact(p.exposed[k].max_s));
  put("host_wait_s_max", format_exact(p.host_wait.max_s));
  put("bubble_s_max", format_exact(p.bubble.max_s));
  put("idle_s_max", format_exact(p.idle.max_s));
}

}  // namespace

const std::vector<SweepColumn>& sweep_columns() {
  static const std::vector<SweepColumn> columns = make_columns();
  return columns;
}

std::size_t sweep_column(const std::string& name) {
  const std::vector<SweepColumn>& c = sweep_columns();
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i].name == name) return i;
  }
  throw std::logic_error("no sweep column '" + name + "'");
}

PointRow evaluate_point(const SweepSpec& spec, std::size_t id, const SweepPredictor& predictor) {
  PointRow row;
  row.id = id;
  row.cells.assign(sweep_columns().size(), "");
  row.cells[sweep_column("point")] = std::to_string(id);
  const auto finish = [&row](const char* status, const std::string& error) {
    row.cells[sweep_column("status")] = status;
    row.cells[sweep_column("error")] = error;
    return row;
  };
  const SweepPoint point = make_point(spec, id);
  put_scenario(point.scenario, row.cells);
  if (!point.valid()) return finish("invalid", point.error);
  const std::string prefix = spec.path + ": ";
  try {
    const InputLocation where{spec.path, 0};
    put_memory(estimate_memory(point.scenario,
                               make_pipeline_layout(point.scenario.model, point.scenario.parallel, where)),
               row.cells);
    const PredictOptions options = predictor.options_for(point.scenario);
    const Prediction p = predict(point.scenario, options);
    put_prediction(p, row.cells);
    double lo = 0, hi = 0;
    if (predictor.band(point.scenario, options, p.iteration_s, lo, hi)) {
      row.cells[sweep_column("predicted_lo_s")] = format_exact(lo);
      row.cells[sweep_column("predicted_hi_s")] = format_exact(hi);
    }
    const Novelty novelty = predictor.novelty(point.scenario);
    row.cells[sweep_column("novelty_level")] = novelty.level();
    row.cells[sweep_column("novelty")] = novelty.summary();
    row.cells[sweep_column("a2a_terms")] = predictor.a2a_terms(point.scenario);
  } catch (const InputError& e) {
    const std::string text = e.what();
    return finish("invalid", text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text);
  } catch (const std::exception& e) {
    // A bug in the model must not lose a long sweep: the row records it and the summary counts it.
    return finish("failed", std::string("internal error: ") + e.what());
  }
  return finish("ok", "");
}

}  // namespace moetwin
