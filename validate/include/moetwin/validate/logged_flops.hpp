// A live-run row's logged TFLOP/s against its iteration time and the twin's model FLOPs.
//
// A row's tflops_gpu and iter_s are two readings of one run: logged TFLOP/s x iter_s x GPUs is the FLOP of
// one iteration the training framework counted, and the twin counts the same iteration's FLOPs from the
// model (model_flops, model-flops.md). Megatron's and the twin's counts agree within about 1% on the
// shipped live runs (`moetwin inspect --runs`, flops_vs_logged_pct), so a row where they disagree by more
// than kLoggedFlopsTolerance holds a wrong time, a wrong TFLOP/s or another model's numbers (a cell cut
// from 178.6 to 1, a copied row with another run's time) and scoring it would score the typo.
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"

namespace moetwin {

// |logged / twin - 1| above which a row is reported (issue 43: 5%).
inline constexpr double kLoggedFlopsTolerance = 0.05;

// "FILE:LINE: tflops_gpu: ..." for every row whose logged TFLOP/s (when > 0) and iter_s disagree with the
// twin's model FLOPs beyond the tolerance: the logged value, what iter_s and the model's FLOPs give, and
// the difference in percent. Rows in table order.
std::vector<std::string> logged_flops_mismatches(const LiveRunTable& table);

// Prints nothing: with `strict`, throws InputError (the first mismatch's file, line, column and values);
// otherwise returns the mismatches as warnings for the caller to print.
std::vector<std::string> check_logged_flops(const LiveRunTable& table, bool strict);

}  // namespace moetwin
