#include "moetwin/reports/prediction_report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/ofi_multi_recv.hpp"
#include "moetwin/reports/prediction_columns.hpp"

namespace moetwin {

ResultTable breakdown_table(const Prediction& p) {
  ResultTable t;
  t.columns = {"category", "min_s", "median_s", "max_s", "critical_rank_s"};
  const RankStats& c = p.engine.ranks.at(static_cast<std::size_t>(p.critical_rank));
  auto add = [&](const std::string& name, const RankSpread& s, TimeNs crit) {
    t.add_row({name, Cell::fixed(s.min_s, 6), Cell::fixed(s.median_s, 6), Cell::fixed(s.max_s, 6),
               Cell::fixed(static_cast<double>(crit) * 1e-9, 6)});
  };
  add("compute", p.compute, c.compute);
  for (int k = 0; k < kCommClasses; ++k)
    add(std::string("exposed_") + kCommClassNames[k], p.exposed[k], c.exposed[k]);
  add("host_wait", p.host_wait, c.host_wait);
  add("bubble", p.bubble, c.bubble);
  add("idle", p.idle, c.idle);
  return t;
}

std::string warning_lines(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings) out += "warning: " + w + "\n";
  return out;
}

std::string render_prediction_json(const OutputContext& context,
                                   const std::vector<std::pair<std::string, const ResultTable*>>& tables,
                                   const std::vector<std::string>& warnings, const Novelty* novelty) {
  nlohmann::ordered_json j;
  j["context"] = context_json(context);
  for (const auto& [name, table] : tables) j[name] = rows_json(*table);
  if (novelty != nullptr) j["novelty"] = novelty_json(*novelty);
  j["warnings"] = warnings;
  return j.dump(2) + "\n";
}

namespace {

// Which network model the replay used and, under the flow model, what link sharing cost.
std::string network_line(const Prediction& p) {
  if (p.network == NetworkMode::closed_form) {
    return "closed-form (each collective for its own time; --network flow shares links)";
  }
  TimeNs delay = 0;  // the critical rank's comm time beyond what its ops take alone
  const RankStats& r = p.engine.ranks[static_cast<std::size_t>(p.critical_rank)];
  for (const TimeNs d : r.shared_delay) delay += d;
  return concat({"flow (", std::to_string(p.engine.shared_transfers), " transfers slowed by link sharing; ",
                 "critical rank's comm ", format_fixed(static_cast<double>(delay) * 1e-9, 4),
                 " s longer than alone, overlapped or not)"});
}

// Which component of the stack set the P2P network chunk the prediction assumed (catalog's
// p2p_net_chunk_bytes decides it in this order).
std::string chunk_origin(const Scenario& s) {
  const StackSpec& st = s.stack.spec;
  if (st.nccl_env.p2p_net_chunk_bytes > 0 && s.stack.p2p_net_chunk_bytes == st.nccl_env.p2p_net_chunk_bytes)
    return "NCCL_P2P_NET_CHUNKSIZE as the stack's launcher sets it";
  if (st.ofi_platform_aws && s.instance.ofi_platform_p2p_chunk_bytes > 0 &&
      s.stack.p2p_net_chunk_bytes == s.instance.ofi_platform_p2p_chunk_bytes)
    return "aws-ofi-nccl platform-aws default on " + s.instance.name;
  if (s.stack.p2p_net_chunk_bytes == kNcclDefaultP2pNetChunkBytes)
    return st.ofi_platform_aws ? "NCCL's default: no platform-aws value for " + s.instance.name
                               : "NCCL's default: aws-ofi-nccl built without platform-aws";
  return "set by the scenario";
}

}  // namespace

std::string term_spread_text(const Scenario& s, const TermSpread& spread) {
  std::vector<std::string> parts;
  if (!spread.own_terms) {
    parts.push_back(concat(
        {"over the A2A terms of each measured dispatcher (", s.dispatcher.name, " has no live runs)"}));
  }
  if (!spread.inherited_stack.empty()) {
    parts.push_back(concat({"over the answer on the inherited stack ", spread.inherited_stack, " (",
                            format_fixed(spread.inherited_stack_s, 3), " s: ", s.stack.spec.name,
                            "'s modelled differences were never measured in training)"}));
  }
  if (parts.empty()) return "";
  std::string text = concat({"spans ", format_fixed(spread.fastest_s, 3), " - ",
                             format_fixed(spread.slowest_s, 3), " s ", parts.front()});
  if (parts.size() > 1) text += " and " + parts.back();
  return text;
}

std::string render_prediction_text(const Scenario& s, const Prediction& p, const FittedProfile& profile,
                                   const std::string& memory, const TermSpread* spread) {
  const Novelty novelty = novelty_of(s, profile);
  const UncertaintyBand band = spread ? spread->band : band_for(profile, p.iteration_s, novelty);
  const std::string spans = spread ? term_spread_text(s, *spread) : std::string();
  std::vector<std::pair<std::string, std::string>> kv = {
      {"scenario", s.name},
      {"model / instance", s.model.name + " on " + std::to_string(s.nodes) + " x " + s.instance.name},
      {"layout", "tp" + std::to_string(s.parallel.tp) + " pp" + std::to_string(s.parallel.pp) + " vpp" +
                     std::to_string(s.parallel.vpp) + " ep" + std::to_string(s.parallel.ep) + " etp" +
                     std::to_string(s.parallel.etp) + " dp" + std::to_string(s.parallel.dp) + ", mb " +
                     std::to_string(s.training.micro_batch) + ", " + std::to_string(p.microbatches) +
                     " microbatches"},
      {"dispatcher", s.dispatcher.name + " (cost model: " + p.built.moe_model +
                         ", collectives: " + p.built.comm_model + ")"},
      {"stack", s.stack.spec.name + (s.stack.from_default ? " (default: no [stack] table)" : "") +
                    ", NCCL P2P net chunk " + format_fixed(s.stack.p2p_net_chunk_bytes / 1024.0, 0) +
                    " KiB (" + chunk_origin(s) + ")" +
                    (s.training.moe_pad_to_capacity && s.dispatcher.transport == DispatcherTransport::nccl
                         ? ", alltoall padded to capacity (no counts all-gather, no host sync)"
                         : "") +
                    (s.stack.spec.ofi_multi_recv
                         ? ", " + multi_recv_bound(s.stack.spec, s.instance, !s.stack.nccl.pxn_disable).why
                         : "")},
      {"precision",
       fp8_recipe_note(s.training.precision).empty()
           ? std::string(to_string(s.training.precision))
           : concat({to_string(s.training.precision), " (", fp8_recipe_note(s.training.precision), ")"})},
      {"profile", profile_label(profile)},
      {"compute", p.compute_source},
      {"collectives", p.collective_source},
      {"dispatcher terms", p.built.a2a_source},
      {"iteration", format_fixed(p.iteration_s, 4) + " s (expected measured range " +
                        format_fixed(band.lo_s, 3) + " - " + format_fixed(band.hi_s, 3) + " s" + ", 80%: " +
                        band_source(profile, novelty) + (spans.empty() ? "" : "; " + spans) + ")"},
      {"novelty", novelty.covered() ? std::string("covered (every dimension has live runs in the fit)")
                                    : concat({novelty.level(), ": ", novelty.summary(), " (distance ",
                                              format_fixed(novelty.distance(), 1), " from the fit)"})},
      {"tokens/s", format_fixed(p.tokens_per_s, 0)},
      {"model TFLOP/s/GPU", format_fixed(p.model_tflops_per_gpu, 1)},
      {"critical rank", std::to_string(p.critical_rank) + " (" + rank_name(s.parallel, p.critical_rank) +
                            ", stage " + std::to_string(p.critical_stage) + ")"},
      {"replay", std::to_string(p.ops) + " ops, " + std::to_string(p.events) + " events"},
      {"network", network_line(p)},
  };
  if (!novelty.nearest.empty()) {
    // Right after the novelty line: the nearest fitted row and how far it is.
    const auto at = std::find_if(kv.begin(), kv.end(), [](const auto& e) { return e.first == "novelty"; });
    kv.insert(at + 1, {"nearest fitted", concat({format_fixed(novelty.nearest.front().distance, 2),
                                                 " units: ", novelty.nearest.front().key})});
  }
  if (!memory.empty()) kv.push_back({"memory", memory});
  return render_key_values(kv) + warning_lines(p.warnings) + "\nper-rank breakdown (s):\n" +
         render_text(breakdown_table(p));
}

}  // namespace moetwin
