// Megatron-Bridge perf-recipe settings joined to NVIDIA's dense rows (recipe_settings.hpp).
#include "moetwin/validate/recipe_settings.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

bool flag(const CsvRowReader& r, const std::string& column) {
  return r.choice(column, {"True", "False"}) == "True";
}

// A layout cell: blank (the recipe leaves it to the default) reads as `blank`.
int layout(const CsvRowReader& r, const std::string& column, int blank) {
  return r.text(column).empty() ? blank : r.int32(column, 1, 1 << 20);
}

// The file's release of a dense row's container: "26.06.01(?)" is the file's assumed 26.06.01 mapping.
std::string release_of(const std::string& release) {
  const std::string suffix = "(?)";
  if (release.size() > suffix.size() &&
      release.compare(release.size() - suffix.size(), suffix.size(), suffix) == 0)
    return release.substr(0, release.size() - suffix.size());
  return release;
}

// Dense-file names -> recipe-file names.
std::string recipe_model(const std::string& model) {
  static const std::map<std::string, std::string> names = {
      {"llama3-8b", "llama3_8b"}, {"llama3-70b", "llama3_70b"}, {"llama3.1-405b", "llama31_405b"}};
  const auto it = names.find(model);
  return it == names.end() ? "" : it->second;
}

bool precision_matches(const std::string& dense, const std::string& recipe) {
  if (dense == "bf16" || dense == "nvfp4") return recipe == dense;
  if (dense == "fp8-current") return recipe == "fp8_cs" || recipe == "fp8cs";
  if (dense == "mxfp8") return recipe == "fp8_mx" || recipe == "fp8mx";
  if (dense == "fp8-hybrid") return recipe == "fp8_ds";
  return false;
}

bool same_settings(const RecipeRow& a, const RecipeRow& b) {
  return a.megatron_fsdp == b.megatron_fsdp && a.tp_comm_overlap == b.tp_comm_overlap &&
         a.cpu_offload_layers == b.cpu_offload_layers && a.cuda_graph_impl == b.cuda_graph_impl &&
         a.cuda_graph_scope == b.cuda_graph_scope && a.recompute == b.recompute && a.pp_p2p == b.pp_p2p;
}

}  // namespace

RecipeTable read_recipe_settings(const std::string& path) {
  const CsvTable t = read_csv_file(path);
  RecipeTable out;
  out.path = path;
  for (const CsvRow& row : t.rows) {
    const CsvRowReader r(t, row);
    RecipeRow x;
    x.where = concat({path, ":", std::to_string(row.line)});
    x.release = r.text("release");
    x.bridge_ref = r.text("bridge_ref");
    x.commit = r.text("commit");
    x.model = r.text("model");
    x.gpu = r.text("gpu");
    x.precision = r.text("precision");
    x.variant = r.text("variant");
    x.wrapper = r.text("source").find("WRAPPER") != std::string::npos;
    if (x.wrapper) {  // fields not parsed from source: kept for the count, never joined
      out.rows.push_back(std::move(x));
      continue;
    }
    x.num_gpus = r.int32("num_gpus", 1, 1 << 20);
    x.tp = layout(r, "tp", 1);
    x.pp = layout(r, "pp", 1);
    x.cp = layout(r, "cp", 1);
    x.vp = layout(r, "vp", 1);
    x.mbs = layout(r, "mbs", 0);
    x.gbs = layout(r, "gbs", 0);
    x.megatron_fsdp = flag(r, "megatron_fsdp");
    x.tp_comm_overlap = flag(r, "tp_comm_overlap");
    x.cpu_offload_layers = r.text("cpu_offload_layers").empty() ? 0 : r.int32("cpu_offload_layers", 0, 1000);
    x.cuda_graph_impl = r.text("cuda_graph_impl");
    x.cuda_graph_scope = r.text("cuda_graph_scope");
    x.recompute = r.text("recompute");
    x.pp_p2p = r.choice("pp_p2p", {"overlap_p2p_comm", "batch_p2p_comm", "n/a(pp1)"});
    out.rows.push_back(std::move(x));
  }
  return out;
}

std::string recipe_file_beside(const std::string& dense_path) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(dense_path).parent_path() / "megatron-bridge-llama-recipes.csv";
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? p.string() : std::string();
}

std::optional<RecipeRow> find_recipe(const RecipeTable& recipes, const DenseRecipeKey& key) {
  const std::string model = recipe_model(key.model);
  const std::string gpu = key.instance.rfind("dgx-", 0) == 0 ? key.instance.substr(4) : "";
  if (model.empty() || gpu.empty()) return std::nullopt;
  std::optional<RecipeRow> found;
  for (const RecipeRow& x : recipes.rows) {
    if (x.wrapper || release_of(x.release) != key.container || x.model != model || x.gpu != gpu ||
        !precision_matches(key.precision, x.precision))
      continue;
    if (x.num_gpus != key.gpus || x.tp != key.tp || x.pp != key.pp || x.cp != key.cp || x.vp != key.vpp ||
        x.mbs != key.mb || x.gbs != key.gbs)
      continue;
    if (found && !same_settings(*found, x)) return std::nullopt;  // ambiguous: no single value
    if (!found) found = x;
  }
  return found;
}

RecipeTwinSettings recipe_twin_settings(const RecipeRow& recipe, int layers, int pp, int vpp) {
  RecipeTwinSettings s;
  s.tp_comm_overlap = recipe.tp_comm_overlap;
  s.overlap_p2p_comm = recipe.pp_p2p == "overlap_p2p_comm";
  const std::string& impl = recipe.cuda_graph_impl;
  const bool full_scope = recipe.cuda_graph_scope.find("full_iteration") != std::string::npos;
  if (impl.rfind("local", 0) == 0) {
    if (full_scope) {
      s.cuda_graphs = "full-iteration";
    } else {
      s.cuda_graphs = "te-scoped";
      s.note =
          concat({"cuda_graph_impl ", impl,
                  ": Megatron-Core's per-layer graphs replayed as te-scoped (the twin captures attention; "
                  "the dense MLP stays eager there)"});
    }
  } else if (impl == "transformer_engine") {
    s.cuda_graphs = "te-scoped";
    s.note =
        concat({"cuda_graph_impl transformer_engine, scope ", recipe.cuda_graph_scope,
                ": replayed as te-scoped (the twin captures attention; the dense MLP stays eager there)"});
  } else {
    s.cuda_graphs = "none";  // none, "none(recipe default)", "recipe default(none)": any scope is unused
  }
  if (recipe.cpu_offload_layers > 0) s.cpu_offload_layers = std::to_string(recipe.cpu_offload_layers);
  if (recipe.recompute == "none") {
    s.recompute = "none";
  } else if (recipe.recompute.rfind("full/block/", 0) == 0) {
    const int chunk = layers / (pp * vpp);  // decoder layers per pipeline chunk (rounded down)
    const int n = std::atoi(recipe.recompute.c_str() + 11);
    if (n >= chunk && chunk > 0) {
      s.recompute = "full";
    } else {
      s.refusal = "recompute";
      s.detail = concat({"recompute ", recipe.recompute, " (", recipe.where, "): full recompute of ",
                         std::to_string(n), " of ", std::to_string(chunk),
                         " layers per pipeline chunk is not modelled (the twin recomputes all or none)"});
    }
  } else {
    s.refusal = "recompute";
    s.detail =
        concat({"recompute ", recipe.recompute, " (", recipe.where, "): not a setting the twin reads"});
  }
  return s;
}

}  // namespace moetwin
