// NVIDIA's dense rows as live runs: refusals by mechanism, the rest through the live-run parser
// (dense_runs.hpp).
#include "moetwin/validate/dense_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {
namespace {

// The columns the dense file adds to the live-run schema (read here, not by the live-run parser).
const char* const kDenseOnly[] = {"fsdp", "container"};

std::string where_of(const CsvTable& table, const CsvRow& row) {
  return concat({table.path, ":", std::to_string(row.line)});
}

// Why `row` is outside the model, or "" when the twin can replay it. `detail` gets the sentence.
std::string refusal(const CsvRowReader& r, std::string& detail) {
  const std::string precision = r.has("precision") ? r.text("precision") : "bf16";
  if (precision == "nvfp4") {
    detail =
        "precision nvfp4: NVFP4 is not modelled (the catalog has no FP4 tensor-core rate and the twin prices "
        "no "
        "NVFP4 recipe costs: 16-element block scales, random Hadamard transforms, stochastic rounding)";
    return "nvfp4";
  }
  if (r.int32("fsdp", 0, 1) == 1) {
    detail =
        "fsdp 1: Megatron-FSDP is not modelled (its per-layer parameter all-gathers and gradient "
        "reduce-scatters overlap the layers; the twin's data parallelism is the distributed optimizer's "
        "reduce-scatter and all-gather once per iteration)";
    return "fsdp";
  }
  const int cp = r.has("cp") ? r.int32("cp", 1, 1 << 20) : 1;
  if (cp > 1) {
    detail =
        concat({"cp ", std::to_string(cp),
                ": context parallelism is not modelled (no ring-attention KV exchange; each rank's causal "
                "attention would be priced as (seq/cp)^2 where ring attention computes seq^2 / (2 cp))"});
    return "cp";
  }
  return "";
}

// NVIDIA's cuda_graphs cell (Megatron-Bridge's cuda_graph_impl and scope) as the twin's training.cuda_graphs,
// with the assumption said in `note` when the twin's graphs are not exactly the recipe's:
//   none, full_iteration: as named;
//   te:<scope> with attn: TE-scoped graphs (sim/cuda_graphs.hpp: attention and the router captured; the
//     moe_preprocess part stays eager there, as the dropless preprocess follows a host sync);
//   te:<scope> without attn (moe_router+moe_preprocess): replayed without graphs: the router's few launches
//     per layer are the only captured kernels, and the twin's te-scoped region would capture attention too;
//   local: Megatron-Core's own per-layer graphs (cuda_graph_impl "local"), replayed as TE-scoped graphs.
std::string twin_cuda_graphs(const std::string& cell, std::string& note) {
  if (cell == "none" || cell.empty()) return "none";
  if (cell == "full_iteration" || cell == "full-iteration") return "full-iteration";
  if (cell.rfind("te:", 0) == 0) {
    if (cell.find("attn") != std::string::npos) return "te-scoped";
    note = concat({"cuda_graphs: ", cell,
                   ": replayed without graphs (the scope captures the router alone; the twin's te-scoped "
                   "region would capture attention too)"});
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

// One table of the accepted rows in the live-run schema: dense-only columns dropped, `recompute` unknown ->
// none, `dispatcher` none -> nccl-alltoall (a dense model has no MoE layer, so no dispatcher ever runs),
// `cuda_graphs` in the twin's names (twin_cuda_graphs). A what-if table (no iter_s column: layouts without
// measured times) gets iter_s 1 and tflops_gpu 0 for the parser; parse_dense_runs sets iter_s back to 0.
CsvTable live_run_view(const CsvTable& table, const std::vector<const CsvRow*>& rows) {
  CsvTable out;
  out.path = table.path;
  std::vector<std::size_t> keep;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (std::find(std::begin(kDenseOnly), std::end(kDenseOnly), table.header[c]) != std::end(kDenseOnly))
      continue;
    keep.push_back(c);
    out.header.push_back(table.header[c]);
  }
  const bool what_if = !table.has_column("iter_s");
  if (what_if) {
    out.header.emplace_back("iter_s");
    if (!table.has_column("tflops_gpu")) out.header.emplace_back("tflops_gpu");
  }
  const std::size_t recompute = table.column("recompute");
  const std::size_t dispatcher = table.column("dispatcher");
  const std::size_t graphs =
      table.has_column("cuda_graphs") ? table.column("cuda_graphs") : table.header.size();
  for (const CsvRow* row : rows) {
    CsvRow v;
    v.line = row->line;
    for (const std::size_t c : keep) {
      std::string cell = row->fields[c];
      if (c == recompute && cell == "unknown") cell = "none";
      if (c == dispatcher && cell == "none") cell = "nccl-alltoall";
      std::string unused;
      if (c == graphs) cell = twin_cuda_graphs(cell, unused);
      v.fields.push_back(std::move(cell));
    }
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

}  // namespace

bool is_dense_run_table(const CsvTable& table) {
  return table.has_column("fsdp") && table.has_column("container");
}

RunRows parse_dense_runs(const CsvTable& table, const Catalog& catalog) {
  RunRows out;
  out.dense = true;
  out.rows_read = static_cast<int>(table.rows.size());
  std::vector<const CsvRow*> accepted;
  for (const CsvRow& row : table.rows) {
    const CsvRowReader r(table, row);
    std::string detail;
    const std::string why = refusal(r, detail);
    if (why.empty()) {
      accepted.push_back(&row);
      continue;
    }
    out.refused.push_back({where_of(table, row), r.text("campaign"), r.text("instance"), why, detail});
  }
  const bool what_if = !table.has_column("iter_s");
  if (what_if) {
    // Layouts without measured times (nvidia-moe-layouts.csv): each row parsed on its own, and a row the
    // scenario rules refuse (a mechanism the twin lacks) is counted with the rule's sentence, not fatal.
    std::vector<const CsvRow*> parsed;
    for (const CsvRow* row : accepted) {
      try {
        LiveRunTable one = parse_live_runs(live_run_view(table, {row}), catalog);
        out.table.runs.push_back(std::move(one.runs.front()));
        parsed.push_back(row);
      } catch (const InputError& e) {
        const CsvRowReader r(table, *row);
        out.refused.push_back({where_of(table, *row), r.text("campaign"), r.text("instance"), rule_key(e),
                               without_location(e)});
      }
    }
    accepted = std::move(parsed);
  } else {
    out.table = parse_live_runs(live_run_view(table, accepted), catalog);
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
    if (row.fields[recompute] == "unknown") {
      run.warnings.push_back(concat({where,
                                     ": recompute: unknown in NVIDIA's table: replayed as none (the "
                                     "Llama perf recipes' recompute is not published)"}));
    }
    run.warnings.push_back(concat({where, ": container: ", row.fields[container],
                                   " is no catalog stack: the default stack's NCCL mechanisms serve it (",
                                   run.scenario.stack.spec.name, ")"}));
    // NVIDIA's perf recipes run Megatron-Bridge's comm-overlap config, which sets overlap_p2p_comm = True
    // and batch_p2p_comm = False whenever pp > 1 and vpp > 1 (Megatron-Bridge
    // src/megatron/bridge/training/comm_overlap.py, CommOverlapConfig / _get_model_comm_overlap_cfgs, as
    // NeMo 2's MegatronCommOverlapCallback; UNVERIFIED: no copy under /work/shared). Set here, not through
    // the default stack, whose live runs do not show it (catalog/data/stacks.toml).
    run.scenario.training.overlap_p2p_comm = true;
    if (run.scenario.parallel.vpp > 1) {
      run.warnings.push_back(
          concat({where, ": vpp ", std::to_string(run.scenario.parallel.vpp),
                  ": replayed with overlap_p2p_comm (Megatron-Bridge's comm-overlap config for pp > 1 and "
                  "vpp > 1): the interleaved schedule's P2P posted asynchronously"}));
    }
    // NVIDIA's Llama perf recipes run Transformer Engine's TP communication overlap wherever tp > 1: NeMo 2's
    // llama3_70b / llama31_405b recipes (pretrain_performance_optimizations) add
    // MegatronCommOverlapCallback(tp_comm_overlap=True) with a userbuffers preset per layout, and the
    // presets' names match these rows' layouts (userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192 for the
    // H100 405B rows, userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192,
    // userbuffers_bf16_b200_h8192_tp2_mbs1_ seqlen8192 for the 70B TP2 rows); Megatron-Bridge's perf configs
    // carry the same presets. UNVERIFIED: from memory, no copy under /work/shared; the tables do not publish
    // it. `--what-if-no-tp-comm-overlap` replays the rows without it (drop_tp_comm_overlap).
    if (run.scenario.parallel.tp > 1) {
      run.scenario.training.tp_comm_overlap = true;
      run.warnings.push_back(concat({where, ": tp ", std::to_string(run.scenario.parallel.tp),
                                     ": replayed with tp_comm_overlap (NVIDIA's Llama recipes' Transformer "
                                     "Engine userbuffers presets; assumed, not published per row)"}));
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
      parts.push_back(parse_dense_runs(table, catalog));
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
