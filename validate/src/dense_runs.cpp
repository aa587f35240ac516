// NVIDIA's dense rows as live runs: refusals by mechanism, the rest through the live-run parser
// (dense_runs.hpp).
#include "moetwin/validate/dense_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/validate/accuracy.hpp"
#include "moetwin/validate/moe_recipe_notes.hpp"
#include "moetwin/validate/recipe_settings.hpp"

namespace moetwin {
namespace {

// The columns the dense file adds to the live-run schema (read here, not by the live-run parser; fsdp is the
// live-run parser's training.megatron_fsdp).
const char* const kDenseOnly[] = {"container"};

std::string where_of(const CsvTable& table, const CsvRow& row) {
  return concat({table.path, ":", std::to_string(row.line)});
}

// NVIDIA's cuda_graphs cell (Megatron-Bridge's cuda_graph_impl and scope) as the twin's training.cuda_graphs,
// with the assumption said in `note` when the twin's graphs are not exactly the recipe's:
//   none, full_iteration: as named;
//   te:<scope> with attn: TE-scoped graphs (sim/cuda_graphs.hpp: attention and the router captured; the
//     moe_preprocess part stays eager there, as the dropless preprocess follows a host sync);
//   te:<scope> with moe_router but not attn (moe_router+moe_preprocess): te-router (sim/cuda_graphs.hpp: the
//     router alone captured; moe_preprocess eager as above);
//   local: Megatron-Core's own per-layer graphs (cuda_graph_impl "local"), replayed as TE-scoped graphs.
std::string twin_cuda_graphs(const std::string& cell, std::string& note) {
  if (cell == "none" || cell.empty()) return "none";
  if (cell == "full_iteration" || cell == "full-iteration") return "full-iteration";
  if (cell.rfind("te:", 0) == 0) {
    if (cell.find("attn") != std::string::npos) return "te-scoped";
    if (cell.find("moe_router") != std::string::npos) return "te-router";
    note = concat({"cuda_graphs: ", cell, ": replayed without graphs (a scope the twin does not capture)"});
    return "none";
  }
  if (cell == "local") {
    note =
        "cuda_graphs: local: Megatron-Core's per-layer graphs replayed as te-scoped (attention and router "
        "captured, the MoE dispatch eager)";
    return "te-scoped";
  }
  return cell;  // the live-run parser names the expected values
}

// A row's recompute, cuda_graphs and cpu_offload_layers cells as its recipe sets them ("" = as the table has
// them; the dense table has no offload column: "" = 0).
struct RowOverride {
  std::string recompute, cuda_graphs, cpu_offload_layers;
};

// One table of the accepted rows in the live-run schema: dense-only columns dropped, `recompute` unknown ->
// none, `dispatcher` none -> nccl-alltoall (a dense model has no MoE layer, so no dispatcher ever runs),
// `cuda_graphs` in the twin's names (twin_cuda_graphs), a column of its own when the table has none; a
// row's recipe (overrides[i]) replaces its recompute and cuda_graphs. A what-if table (no iter_s column:
// layouts without measured times) gets iter_s 1 and tflops_gpu 0 for the parser; parse_dense_runs sets
// iter_s back to 0.

CsvTable live_run_view(const CsvTable& table, const std::vector<const CsvRow*>& rows,
                       const std::vector<RowOverride>& overrides) {
  CsvTable out;
  out.path = table.path;
  std::vector<std::size_t> keep;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (std::find(std::begin(kDenseOnly), std::end(kDenseOnly), table.header[c]) != std::end(kDenseOnly))
      continue;
    keep.push_back(c);
    out.header.push_back(table.header[c]);
  }
  const bool has_graphs = table.has_column("cuda_graphs");
  const std::size_t graphs = has_graphs ? table.column("cuda_graphs") : table.header.size();
  if (!has_graphs) out.header.emplace_back("cuda_graphs");  // the recipe's, where it has one
  out.header.emplace_back("cpu_offload_layers");            // the recipe's, where it has one
  const bool what_if = !table.has_column("iter_s");
  if (what_if) {
    out.header.emplace_back("iter_s");
    if (!table.has_column("tflops_gpu")) out.header.emplace_back("tflops_gpu");
  }
  const std::size_t recompute = table.column("recompute");
  const std::size_t dispatcher = table.column("dispatcher");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const CsvRow* row = rows[i];
    const RowOverride* over = i < overrides.size() ? &overrides[i] : nullptr;
    CsvRow v;
    v.line = row->line;
    for (const std::size_t c : keep) {
      std::string cell = row->fields[c];
      if (c == recompute && cell == "unknown") cell = "none";
      if (c == recompute && over != nullptr && !over->recompute.empty()) cell = over->recompute;
      if (c == dispatcher && cell == "none") cell = "nccl-alltoall";
      std::string unused;
      if (c == graphs) cell = twin_cuda_graphs(cell, unused);
      if (c == graphs && over != nullptr && !over->cuda_graphs.empty()) cell = over->cuda_graphs;
      v.fields.push_back(std::move(cell));
    }
    if (!has_graphs) v.fields.emplace_back(over != nullptr ? over->cuda_graphs : std::string());
    v.fields.emplace_back(over != nullptr ? over->cpu_offload_layers : std::string());
    if (what_if) {
      v.fields.emplace_back("1");
      if (!table.has_column("tflops_gpu")) v.fields.emplace_back("0");
    }
    out.rows.push_back(std::move(v));
  }
  return out;
}

// The short key of a rule refusal (the scenario field the rule names: "parallel.ep",
// "training.overlap_moe_a2a"). An InputError's message without its "file:line: " (what() reads "file:line:
// key: value: expected ...", common/input_error.hpp).
std::string without_location(const InputError& e) {
  const std::string text = e.what();
  const std::string prefix = concat({e.where().file, ":", std::to_string(e.where().line), ": "});
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

std::string rule_key(const InputError& e) {
  const std::string text = without_location(e);
  const std::size_t end = text.find(": ");
  return end == std::string::npos ? std::string("rule") : text.substr(0, end);
}

// How a job on an instance whose NVLink domain spans several nodes (NVL72 trays) lies in its domains: ranks
// fill consecutive domains of nvlink_domain_gpus in torchrun order (topology/placement.hpp), so the groups
// inside a domain use its NVSwitch fabric and the rest the scale-out fabric. "" on an instance whose domain
// is its node. NVIDIA's tables do not say how their jobs were placed in racks: the catalog's full domain is
// the assumption, said in the row.
std::string domain_placement(const Scenario& s) {
  const int domain = nvlink_domain_gpus(s.instance);
  if (domain <= s.instance.gpus) return "";
  const int gpus = s.gpus();
  if (gpus <= domain) {
    return concat({"the job's ", std::to_string(gpus), " GPUs (", std::to_string(s.nodes), " nodes of ",
                   std::to_string(s.instance.gpus), ") lie in one NVLink domain of ", std::to_string(domain),
                   ": every leg on its NVSwitch fabric, none on ", to_string(s.instance.fabric)});
  }
  std::string sizes;
  for (int first = 0; first < gpus; first += domain)
    sizes += concat({sizes.empty() ? "" : " + ", std::to_string(std::min(domain, gpus - first))});
  return concat(
      {"the job's ", std::to_string(gpus), " GPUs fill ", std::to_string((gpus + domain - 1) / domain),
       " NVLink domains of ", std::to_string(domain), " in rank order (", sizes,
       "; the racks' placement is not in NVIDIA's table): groups inside a domain on NVLink, the rest on ",
       to_string(s.instance.fabric)});
}

// A dense row's recipe (recipe_settings.hpp), or why it has none.
struct JoinedRecipe {
  std::optional<RecipeRow> recipe;
  RecipeTwinSettings twin;
  std::string why_none;  // "no recipe file", "no row of FILE for ..."
};

JoinedRecipe join_recipe(const CsvRowReader& r, const RecipeTable& recipes) {
  JoinedRecipe j;
  DenseRecipeKey k;
  k.container = r.text("container");
  k.model = r.text("model");
  k.instance = r.text("instance");
  k.precision = r.has("precision") ? r.text("precision") : "bf16";
  k.gpus = r.int32("gpus", 1, 1 << 20);
  k.tp = r.int32("tp", 1, 1 << 20);
  k.pp = r.int32("pp", 1, 1 << 20);
  k.cp = r.has("cp") ? r.int32("cp", 1, 1 << 20) : 1;
  k.vpp = r.int32("vpp", 1, 1 << 20);
  k.mb = r.int32("mb", 1, 1 << 20);
  k.gbs = r.int32("gbs", 1, 1 << 20);
  j.recipe = find_recipe(recipes, k);
  if (j.recipe) {
    j.twin = recipe_twin_settings(*j.recipe, r.int32("layers", 1, 1 << 20), k.pp, k.vpp);
  } else {
    j.why_none = concat({"no single row of ", recipes.path, " for release ", k.container, ", ", k.model, ", ",
                         k.instance, ", ", k.precision, " at this layout"});
  }
  return j;
}

// The row replayed with its recipe's settings (recompute and CUDA graphs went through the live-run view),
// the source kept in its warnings.
void apply_recipe(LiveRun& run, const RecipeRow& recipe, const RecipeTwinSettings& twin,
                  const CsvTable& table, const CsvRow& row, const std::string& where) {
  TrainingConfig& t = run.scenario.training;
  t.tp_comm_overlap = twin.tp_comm_overlap && run.scenario.parallel.tp > 1;
  t.overlap_p2p_comm = twin.overlap_p2p_comm;
  run.warnings.push_back(concat({where,
                                 ": settings from Megatron-Bridge ",
                                 recipe.bridge_ref,
                                 " (",
                                 recipe.commit,
                                 ", ",
                                 recipe.where,
                                 "): tp_comm_overlap ",
                                 recipe.tp_comm_overlap ? "True" : "False",
                                 ", ",
                                 recipe.pp_p2p,
                                 ", cuda_graph_impl ",
                                 recipe.cuda_graph_impl,
                                 recipe.cuda_graph_scope.empty() ? "" : " scope " + recipe.cuda_graph_scope,
                                 ", recompute ",
                                 recipe.recompute,
                                 ", cpu_offload_layers ",
                                 std::to_string(recipe.cpu_offload_layers),
                                 ": replayed with tp_comm_overlap ",
                                 t.tp_comm_overlap ? "on" : "off",
                                 ", overlap_p2p_comm ",
                                 twin.overlap_p2p_comm ? "on" : "off",
                                 ", cuda_graphs ",
                                 to_string(t.cuda_graphs),
                                 ", recompute ",
                                 to_string(t.recompute),
                                 ", cpu_offload_layers ",
                                 std::to_string(t.cpu_offload_layers)}));
  if (t.cpu_offload_layers > 0) {
    const InstanceSpec& in = run.scenario.instance;
    run.warnings.push_back(concat(
        {where, ": cpu_offload_layers ", std::to_string(t.cpu_offload_layers), ": activations copied over ",
         in.host_link, " at ", format_fixed(in.host_link_bandwidth / 1e9, 0), " GB/s per GPU and direction (",
         in.host_link_source, "); the copies' exposed time is the breakdown's pp class (pp 1)"}));
  }
  if (!twin.note.empty()) run.warnings.push_back(concat({where, ": ", twin.note}));
  const bool fsdp = row.fields[table.column("fsdp")] == "1";
  if (recipe.megatron_fsdp != fsdp) {
    run.warnings.push_back(concat({where, ": fsdp ", fsdp ? "1" : "0", " in NVIDIA's table, megatron_fsdp ",
                                   recipe.megatron_fsdp ? "True" : "False", " in ", recipe.where,
                                   ": the two files disagree (the table's value is replayed)"}));
  }
}

// No recipe row: the assumptions of before the join, each marked UNVERIFIED in the row's warnings.
// `graphs_in_table`: the table's own cuda_graphs column was replayed (NVIDIA's MoE layouts), so no assumption
// about graphs is made.
void assume_settings(LiveRun& run, const std::string& why_none, bool recompute_unknown, bool graphs_in_table,
                     const std::string& where) {
  if (recompute_unknown) {
    run.warnings.push_back(concat(
        {where, ": recompute: unknown in NVIDIA's table and ", why_none, ": replayed as none (UNVERIFIED)"}));
  }
  // Megatron-Bridge's comm-overlap config sets overlap_p2p_comm = True and batch_p2p_comm = False whenever
  // pp > 1 and vpp > 1 (training/comm_overlap.py; every matched recipe row with pp > 1 says
  // overlap_p2p_comm, megatron-bridge-llama-recipes.csv). Ignored with vpp 1.
  run.scenario.training.overlap_p2p_comm = true;
  if (run.scenario.parallel.vpp > 1) {
    run.warnings.push_back(concat({where, ": vpp ", std::to_string(run.scenario.parallel.vpp),
                                   ": replayed with overlap_p2p_comm (UNVERIFIED: ", why_none,
                                   "; Megatron-Bridge's comm-overlap rule for pp > 1 and vpp > 1)"}));
  }
  // NVIDIA's Llama perf recipes turn Transformer Engine's TP communication overlap on for most tp > 1
  // layouts (the recipe file: True on every matched tp > 1 row but NVFP4's). `--what-if-no-tp-comm-overlap`
  // replays the rows without it (drop_tp_comm_overlap).
  if (run.scenario.parallel.tp > 1) {
    run.scenario.training.tp_comm_overlap = true;
    run.warnings.push_back(concat({where, ": tp ", std::to_string(run.scenario.parallel.tp),
                                   ": replayed with tp_comm_overlap (UNVERIFIED: ", why_none, ")"}));
  }
  if (!graphs_in_table)
    run.warnings.push_back(concat({where, ": cuda_graphs: none (UNVERIFIED: ", why_none, ")"}));
  // NVIDIA's Llama 3 70B FSDP recipes on GB200 / GB300 offload 20-40 layers' activations to the CPU at every
  // release the recipe file has (megatron-bridge-llama-recipes.csv); without a recipe row, none is replayed.
  if (run.scenario.training.megatron_fsdp) {
    run.warnings.push_back(
        concat({where, ": fsdp 1: replayed with Megatron-FSDP and no CPU offload (UNVERIFIED: ", why_none,
                "; the FSDP recipes of other releases offload 20-40 layers' activations)"}));
  }
}

}  // namespace

bool is_dense_run_table(const CsvTable& table) {
  return table.has_column("fsdp") && table.has_column("container");
}

RunRows parse_dense_runs(const CsvTable& table, const Catalog& catalog, const RecipeTable* recipes) {
  RunRows out;
  out.dense = true;
  out.rows_read = static_cast<int>(table.rows.size());
  std::vector<const CsvRow*> accepted;
  std::vector<JoinedRecipe> joined;  // per accepted row
  for (const CsvRow& row : table.rows) {
    const CsvRowReader r(table, row);
    // Every row's mechanisms are modelled (nvfp4: FP4 rates and quantization, compute_model.hpp; fsdp 1:
    // sim/fsdp.hpp; cp > 1: ring attention, sim/context_parallel.hpp); a row is refused only where its
    // recipe names a setting the twin lacks (join_recipe) or the scenario rules refuse it (below).
    std::string detail;
    std::string why;
    JoinedRecipe j;
    if (recipes == nullptr) j.why_none = "no megatron-bridge-llama-recipes.csv beside this file";
    if (why.empty() && recipes != nullptr) {
      j = join_recipe(r, *recipes);
      if (j.recipe && !j.twin.refusal.empty()) {
        why = j.twin.refusal;
        detail = j.twin.detail;
      }
    }
    if (why.empty()) {
      accepted.push_back(&row);
      joined.push_back(std::move(j));
      continue;
    }
    out.refused.push_back({where_of(table, row), r.text("campaign"), r.text("instance"), why, detail});
  }
  std::vector<RowOverride> overrides;
  for (const JoinedRecipe& j : joined)
    overrides.push_back(j.recipe
                            ? RowOverride{j.twin.recompute, j.twin.cuda_graphs, j.twin.cpu_offload_layers}
                            : RowOverride{});
  const bool what_if = !table.has_column("iter_s");
  if (what_if) {
    // Layouts without measured times (nvidia-moe-layouts.csv): each row parsed on its own, and a row the
    // scenario rules refuse (a mechanism the twin lacks) is counted with the rule's sentence, not fatal.
    std::vector<const CsvRow*> parsed;
    std::vector<JoinedRecipe> parsed_joined;
    for (std::size_t i = 0; i < accepted.size(); ++i) {
      const CsvRow* row = accepted[i];
      try {
        LiveRunTable one = parse_live_runs(live_run_view(table, {row}, {}), catalog);
        out.table.runs.push_back(std::move(one.runs.front()));
        parsed.push_back(row);
        parsed_joined.push_back(joined[i]);
      } catch (const InputError& e) {
        const CsvRowReader r(table, *row);
        out.refused.push_back({where_of(table, *row), r.text("campaign"), r.text("instance"), rule_key(e),
                               without_location(e)});
      }
    }
    accepted = std::move(parsed);
    joined = std::move(parsed_joined);
  } else {
    out.table = parse_live_runs(live_run_view(table, accepted, overrides), catalog);
  }
  out.table.header = table.header;
  out.what_if = what_if;
  const std::size_t recompute = table.column("recompute");
  const std::size_t container = table.column("container");
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    LiveRun& run = out.table.runs[i];
    const CsvRow& row = *accepted[i];
    const std::string where = where_of(table, row);
    run.row = row;  // echoed as read
    if (run.scenario.model.experts > 0 && row.fields[table.column("dispatcher")] == "none") {
      throw InputError({table.path, row.line}, "dispatcher", "none",
                       concat({"a catalog dispatcher: ", run.scenario.model.name,
                               " has experts (none is for dense models only)"}));
    }
    if (what_if) run.iter_s = 0;  // no measured time: a prediction without an error column
    if (table.has_column("cuda_graphs")) {
      std::string note;
      (void)twin_cuda_graphs(row.fields[table.column("cuda_graphs")], note);
      if (!note.empty()) run.warnings.push_back(concat({where, ": ", note}));
    }
    if (what_if && run.scenario.model.experts > 0) {  // NVIDIA's MoE layouts: the recipe settings they imply
      const auto cell = [&](const char* c) { return row.fields[table.column(c)]; };
      const MoeRecipeCells cells{cell("model"),   cell("instance"),    cell("recompute"),
                                 cell("overlap"), cell("cuda_graphs"), cell("container")};
      run.scenario.training.delay_wgrad_compute =
          moe_recipe_delays_wgrad(cells) && run.scenario.training.overlap_moe_a2a;
      for (const std::string& n : moe_recipe_notes(cells)) run.warnings.push_back(concat({where, ": ", n}));
    }
    run.warnings.push_back(concat({where, ": container: ", row.fields[container],
                                   " is no catalog stack: the default stack's NCCL mechanisms serve it (",
                                   run.scenario.stack.spec.name, ")"}));
    if (joined[i].recipe) {
      apply_recipe(run, *joined[i].recipe, joined[i].twin, table, row, where);
    } else {
      assume_settings(run, joined[i].why_none, row.fields[recompute] == "unknown",
                      table.has_column("cuda_graphs"), where);
    }
    if (const std::string placed = domain_placement(run.scenario); !placed.empty())
      run.warnings.push_back(concat({where, ": instance: ", placed}));
  }
  return out;
}

int drop_tp_comm_overlap(LiveRunTable& table) {
  int off = 0;
  for (LiveRun& run : table.runs) {
    if (!run.scenario.training.tp_comm_overlap) continue;
    run.scenario.training.tp_comm_overlap = false;
    run.warnings.push_back(concat({run.scenario.source,
                                   ": tp_comm_overlap: off (what-if): the TP all-gathers and reduce-scatters "
                                   "run in series with their GEMMs"}));
    ++off;
  }
  return off;
}

RunRows read_run_rows(const std::vector<std::string>& paths, const Catalog& catalog) {
  std::vector<RunRows> parts;
  bool any_dense = false;
  for (const std::string& path : paths) {
    const CsvTable table = read_csv_file(path);
    if (is_dense_run_table(table)) {
      any_dense = true;
      const std::string recipe_path = recipe_file_beside(path);
      if (recipe_path.empty()) {
        parts.push_back(parse_dense_runs(table, catalog, nullptr));
      } else {
        const RecipeTable recipes = read_recipe_settings(recipe_path);
        parts.push_back(parse_dense_runs(table, catalog, &recipes));
      }
    } else {
      RunRows r;
      r.rows_read = static_cast<int>(table.rows.size());
      r.table = parse_live_runs(table, catalog);
      parts.push_back(std::move(r));
    }
  }
  // Live-run files alone: the live-run reader's own merge (and its duplicate check across files).
  if (!any_dense) {
    RunRows out;
    out.table = read_live_runs(paths, catalog);
    out.rows_read = static_cast<int>(out.table.runs.size());
    return out;
  }
  if (parts.size() == 1) return std::move(parts.front());
  RunRows out;
  out.dense = true;
  for (const RunRows& p : parts) {
    for (const std::string& h : p.table.header) {
      if (std::find(out.table.header.begin(), out.table.header.end(), h) == out.table.header.end())
        out.table.header.push_back(h);
    }
  }
  for (RunRows& p : parts) {
    out.rows_read += p.rows_read;
    out.what_if = out.what_if || p.what_if;
    for (RefusedRow& r : p.refused) out.refused.push_back(std::move(r));
    for (LiveRun& run : p.table.runs) {
      std::vector<std::string> fields(out.table.header.size());
      for (std::size_t i = 0; i < p.table.header.size(); ++i) {
        const auto at = std::find(out.table.header.begin(), out.table.header.end(), p.table.header[i]) -
                        out.table.header.begin();
        fields[static_cast<std::size_t>(at)] = run.row.fields[i];
      }
      run.row.fields = std::move(fields);
      out.table.runs.push_back(std::move(run));
    }
  }
  return out;
}

std::vector<std::string> refused_row_lines(const RunRows& rows) {
  std::vector<std::string> out;
  if (rows.refused.empty()) return out;
  std::map<std::string, int> by_reason;
  for (const RefusedRow& r : rows.refused) ++by_reason[r.reason];
  std::string counts;
  for (const auto& [reason, n] : by_reason)
    counts += concat({counts.empty() ? "" : ", ", reason, " ", std::to_string(n)});
  out.push_back(concat(
      {std::to_string(rows.rows_read), " rows read, ", std::to_string(rows.table.runs.size()), " replayed, ",
       std::to_string(rows.refused.size()), " refused as outside the model (", counts, ")"}));
  for (const RefusedRow& r : rows.refused)
    out.push_back(concat({r.where, ": refused (", r.campaign, ", ", r.instance, "): ", r.detail}));
  return out;
}

std::map<std::string, std::pair<int, double>> median_error_by_instance(const LiveRunTable& table,
                                                                       const std::vector<double>& predicted) {
  std::map<std::string, std::vector<double>> errors;
  for (std::size_t i = 0; i < table.runs.size() && i < predicted.size(); ++i) {
    if (!(predicted[i] > 0) || !(table.runs[i].iter_s > 0)) continue;  // not predicted, or a what-if row
    const LiveRun& run = table.runs[i];
    errors[run.scenario.instance.name].push_back(std::abs(predicted[i] / run.iter_s - 1));
  }
  std::map<std::string, std::pair<int, double>> out;
  for (auto& [name, e] : errors) out[name] = {static_cast<int>(e.size()), percentile(e, 0.5)};
  return out;
}

}  // namespace moetwin
