// A scenario as a complete scenario file, and `plan --write-scenarios DIR [--top N]`: each listed option
// of a plan written as the scenario it was predicted as, so `predict FILE` reproduces the plan's number and
// `compare`, `recommend` and `inspect` start from the plan's layout instead of a hand-copied one.
#pragma once

#include <string>
#include <vector>

#include "moetwin/planning/plan.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// The TOML text of `s` with every table written out (model, cluster, parallelism, training with its
// precision, dispatcher, stack, routing; scenarios/README.md), each key at its value rather than its
// default, so that parse_scenario reads back the same scenario and a reader sees every choice. `comment`
// lines go first, each prefixed "# ". The model is written by its catalog name: the scenario's model must
// be the catalog's (plan never overrides it); NCCL knobs are the stack's own (plan sets none).
std::string scenario_file_text(const Scenario& s, const std::vector<std::string>& comment);

// The file name of a plan option: its rank (two digits, so a listing sorts as the plan ranks), layout and
// dispatcher, e.g. "01-n32-tp1-pp8-vpp2-ep8-dp32-mb1-none-overlap-nccl-alltoall.toml".
std::string option_file_name(std::size_t rank, const PlanOption& option);

// What write_plan_scenarios did: the files written (rank order), and with `force`, the earlier plan's
// scenario files it replaced (overwritten or removed: files a `moetwin plan` wrote, by their first line)
// and the other entries it left in the folder; names only, sorted.
struct WrittenScenarios {
  std::vector<std::string> written;
  std::vector<std::string> replaced;
  std::vector<std::string> kept;
};

// Writes the scenarios of the first `top` options (by rank; all when fewer) into `dir`, creating the
// folder (its parent must exist, as for --out) and each file atomically. `command` is the plan's command
// line, quoted in each file's comment. A folder that is not empty is refused (check_scenario_dir) unless
// `force` or it holds only what the same command wrote (a rerun, e.g. with --format csv: the same plan);
// then every scenario file an earlier plan wrote there is replaced: the new files are written first, then
// the earlier ones not overwritten are removed, so the folder holds one plan.
WrittenScenarios write_plan_scenarios(const Plan& plan, const Catalog& catalog, const std::string& dir,
                                      std::size_t top, const std::string& command, bool force = false);

// Throws InputError when `dir` cannot take the scenarios: a file, a folder whose parent does not exist,
// or (without `force`) a folder that holds anything but scenario files written by `command` (the plan's
// command line, as write_plan_scenarios quotes it). Called before the plan runs, so a typo does not cost a
// minute of search.
void check_scenario_dir(const std::string& dir, bool force = false, const std::string& command = "");

}  // namespace moetwin
