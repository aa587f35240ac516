// Megatron-Bridge perf-recipe settings per release (validate/data/megatron-bridge-llama-recipes.csv, a copy
// of shared/data/public-2026-12/megatron-bridge-llama-recipes.csv), joined to NVIDIA's dense rows
// (nvidia-dense-runs.csv) so that each row replays with the settings its recipe had at its release instead of
// assumed ones (issue 56 item 1).
//
// Join key: release (the row's container; the file writes the assumed 26.06.01 mapping "26.06.01(?)"), model,
// GPU (the DGX instance's GPU: dgx-h100 -> h100), precision (fp8-current -> fp8_cs / fp8cs, mxfp8 -> fp8_mx /
// fp8mx, fp8-hybrid -> fp8_ds) and layout (num_gpus, tp, pp, cp, vp with blank = 1, mbs, gbs). WRAPPER rows
// (26.08: recipes that wrap another, fields not parsed) never match. A key that matches several rows whose
// settings differ matches none (the row keeps its assumptions and says so).
//
// What a matched recipe decides (recipe_twin_settings):
//   tp_comm_overlap     the recipe's flag (True / False);
//   overlap_p2p_comm    pp_p2p "overlap_p2p_comm" -> on; "n/a(pp1)" -> off (pp 1: no P2P);
//   cuda_graphs         cuda_graph_impl none / "none(recipe default)" / "recipe default(none)" -> none;
//                       local with scope full_iteration -> full-iteration; local without a scope (MCore's
//                       per-layer CudaGraphManager) or transformer_engine -> te-scoped (said in the note);
//   recompute           none -> none; full/block/N -> full when N covers every layer of a pipeline chunk,
//                       else the row is refused (partial block recompute is not modelled);
//   cpu_offload_layers  the recipe's count -> training.cpu_offload_layers (sim/cpu_offload.hpp: the layers'
//                       activations copied over the host link, PCIe or NVLink-C2C);
//   megatron_fsdp       checked against the row's fsdp column (a disagreement is a warning: the two files
//                       describe different jobs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// One recipe row as read (settings as the file writes them).
struct RecipeRow {
  std::string where;  // "file:line"
  std::string release, bridge_ref, commit, model, gpu, precision, variant;
  int num_gpus = 0, tp = 1, pp = 1, cp = 1, vp = 1, mbs = 0, gbs = 0;
  bool megatron_fsdp = false;
  bool tp_comm_overlap = false;
  int cpu_offload_layers = 0;  // blank = 0
  std::string cuda_graph_impl, cuda_graph_scope, recompute, pp_p2p;
  bool wrapper = false;  // a WRAPPER row: its settings were not read from source
};

struct RecipeTable {
  std::string path;
  std::vector<RecipeRow> rows;
};

// Reads the recipe file. Malformed cells are InputErrors naming file, line, column and value.
RecipeTable read_recipe_settings(const std::string& path);
// The recipe file beside a dense-row file (same folder, megatron-bridge-llama-recipes.csv), or "" when there
// is none there.
std::string recipe_file_beside(const std::string& dense_path);

// A dense row's join key, in the dense file's names (model llama3-70b, instance dgx-h100, precision
// fp8-current, container 26.04.01, vpp 1 for none).
struct DenseRecipeKey {
  std::string container, model, instance, precision;
  int gpus = 0, tp = 1, pp = 1, cp = 1, vpp = 1, mb = 0, gbs = 0;
};

// The recipe row for `key`; nullopt when none matches or several match with different settings.
std::optional<RecipeRow> find_recipe(const RecipeTable& recipes, const DenseRecipeKey& key);

// What the twin replays for a matched recipe. `refusal` non-empty (short key: "recompute") when
// the recipe uses a mechanism the twin does not model; `detail` then says which.
struct RecipeTwinSettings {
  bool tp_comm_overlap = false;
  bool overlap_p2p_comm = false;
  std::string cuda_graphs = "none";  // a live-run cuda_graphs cell
  std::string recompute = "none";    // a live-run recompute cell
  std::string cpu_offload_layers;    // a live-run cpu_offload_layers cell ("" = 0)
  std::string note;                  // how the recipe's settings map to the twin's, for the row's warnings
  std::string refusal, detail;
};
RecipeTwinSettings recipe_twin_settings(const RecipeRow& recipe, int layers, int pp, int vpp);

}  // namespace moetwin
