// `moetwin catalog [models|instances|gpus|dispatchers|stacks|ops]`: what the catalog holds, one table per
// kind with its key figures and the source each entry cites (catalog/data/*.toml), and the layer ops the
// workload builder charges (launches, FLOP and byte formulas, sources) with their formula symbols. Without
// a kind, every kind in turn. Wiring only: the figures are the catalog's (for a model's parameter counts,
// accounting's, the ones `inspect` prints; for the ops, sim/layer_ops.hpp's table).
#include <memory>

#include "commands.hpp"
#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/layer_ops.hpp"

namespace moetwin::cli {

namespace {

constexpr double kBillion = 1e9;

std::string attention_text(const ModelSpec& m) {
  if (m.attention == AttentionKind::mla) return concat({"mla ", std::to_string(m.heads), " heads"});
  return concat({"gqa ", std::to_string(m.heads), " heads / ", std::to_string(m.query_groups), " groups"});
}

ResultTable models_table(const Catalog& catalog) {
  ResultTable t;
  t.columns = {"model", "layers",     "dense_layers",   "mtp_layers",      "hidden", "attention", "experts",
               "top_k", "expert_ffn", "total_params_b", "active_params_b", "vocab",  "source"};
  for (const auto& [name, m] : catalog.models()) {
    const ParameterCounts p = count_parameters(m, 1);
    t.add_row({name, Cell::integer(m.layers), Cell::integer(m.dense_layers), Cell::integer(m.mtp_layers),
               Cell::integer(m.hidden), attention_text(m), Cell::integer(m.experts), Cell::integer(m.top_k),
               Cell::integer(m.expert_ffn_hidden), Cell::fixed(static_cast<double>(p.total()) / kBillion, 2),
               Cell::fixed(static_cast<double>(p.active(m)) / kBillion, 2), Cell::integer(m.vocab),
               m.source});
  }
  return t;
}

ResultTable instances_table(const Catalog& catalog) {
  ResultTable t;
  t.columns = {"instance",     "gpu",
               "gpus",         "efa_gen",
               "efa_nics",     "nic_gbps",
               "efa_gda",      "host_memory_gib",
               "cpu",          "price_usd_per_hour",
               "price_source", "source"};
  for (const auto& [name, i] : catalog.instances()) {
    t.add_row({name, i.gpu, Cell::integer(i.gpus), Cell::integer(i.efa_gen), Cell::integer(i.efa_nics),
               Cell::fixed(i.nic_bandwidth * 8 / 1e9, 0), Cell::boolean(i.gpu_initiated_rdma),
               Cell::fixed(i.host_memory_bytes / kGiB, 0), i.cpu,
               i.price_usd_per_hour > 0 ? Cell::fixed(i.price_usd_per_hour, 3) : Cell(""), i.price_source,
               i.source});
  }
  return t;
}

ResultTable gpus_table(const Catalog& catalog) {
  ResultTable t;
  t.columns = {"gpu",        "bf16_tflops", "fp8_tflops", "hbm_gb", "hbm_gib",          "hbm_tb_s",
               "nvlink_gen", "nvlink_gb_s", "sms",        "mxfp8",  "calibration_from", "source"};
  for (const auto& [name, g] : catalog.gpus()) {
    t.add_row({name, Cell::fixed(g.bf16_flops / 1e12, 0), Cell::fixed(g.fp8_flops / 1e12, 0),
               Cell::fixed(g.hbm_bytes / 1e9, 0), Cell::fixed(g.hbm_bytes / kGiB, 1),
               Cell::fixed(g.hbm_bandwidth / 1e12, 2), Cell::integer(g.nvlink_gen),
               Cell::fixed(g.nvlink_bandwidth / 1e9, 0), Cell::integer(g.sms), Cell::boolean(g.mxfp8),
               g.calibration_from, g.source});
  }
  return t;
}

ResultTable dispatchers_table(const Catalog& catalog) {
  ResultTable t;
  t.columns = {"dispatcher",       "description",   "node_dedup",    "sms",   "proxy_threads_per_gpu",
               "max_ranks_normal", "needs_efa_gda", "megatron_flag", "source"};
  for (const auto& [name, d] : catalog.dispatchers()) {
    t.add_row({name, d.description, Cell::boolean(d.node_dedup), Cell::integer(d.sms),
               Cell::integer(d.proxy_threads_per_gpu),
               d.max_ranks_normal > 0 ? Cell::integer(d.max_ranks_normal) : Cell("none"),
               Cell::boolean(d.needs_gpu_initiated_rdma), d.megatron_flag, d.source});
  }
  return t;
}

ResultTable stacks_table(const Catalog& catalog) {
  ResultTable t;
  t.columns = {"stack", "megatron_core", "nccl",      "aws_ofi_nccl", "deepep",
               "uccl",  "nvshmem",       "campaigns", "source"};
  for (const auto& [name, s] : catalog.stacks()) {
    std::string campaigns;
    for (const std::string& c : s.campaigns) campaigns += (campaigns.empty() ? "" : " ") + c;
    t.add_row(
        {name, s.megatron_core, s.nccl, s.aws_ofi_nccl, s.deepep, s.uccl, s.nvshmem, campaigns, s.source});
  }
  return t;
}

ResultTable ops_table() {
  ResultTable t;
  t.columns = {"op",    "phase", "class",       "launches", "gemm_calls_per_expert",
               "flops", "bytes", "dtype_bytes", "source"};
  for (const LayerOp* op : layer_op_table()) {
    t.add_row({op->name, to_string(op->phase), to_string(op->cls), Cell::integer(op->launches),
               Cell::integer(op->gemm_calls_per_expert), op->flops, op->bytes, Cell::integer(op->dtype_bytes),
               op->source});
  }
  return t;
}

// The symbols of the ops' formulas, listed after the ops table (not a kind of its own).
ResultTable op_symbols_table() {
  ResultTable t;
  t.columns = {"symbol", "meaning"};
  for (const LayerOpSymbol& s : layer_op_symbols()) t.add_row({s.symbol, s.meaning});
  return t;
}

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k = {"models", "instances", "gpus", "dispatchers", "stacks", "ops"};
  return k;
}

ResultTable table_of(const Catalog& catalog, const std::string& kind) {
  if (kind == "models") return models_table(catalog);
  if (kind == "instances") return instances_table(catalog);
  if (kind == "gpus") return gpus_table(catalog);
  if (kind == "dispatchers") return dispatchers_table(catalog);
  if (kind == "ops") return ops_table();
  if (kind == "op_symbols") return op_symbols_table();
  return stacks_table(catalog);
}

}  // namespace

void add_catalog_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand("catalog",
                                     "What the catalog holds (models, instances, GPUs, dispatchers, stacks) "
                                     "and the layer ops, with sources");
  struct Options {
    std::string kind;
    std::string format = "text";
    std::string out;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("KIND", o->kind, "models | instances | gpus | dispatchers | stacks | ops (default: all)")
      ->check(CLI::IsMember(kinds()));
  cmd->add_option("--format", o->format, "text | json | csv (csv needs a KIND: one table)")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  cmd->callback([o, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    std::vector<std::string> which = o->kind.empty() ? kinds() : std::vector<std::string>{o->kind};
    if (o->format == "csv" && which.size() > 1) {
      throw InputError({"", 0}, "--format", "csv", "a KIND with csv (one table per file), or text / json");
    }
    // The ops' formula symbols follow the ops (text, JSON; a CSV is the ops table alone).
    if (which.back() == "ops" && o->format != "csv") which.emplace_back("op_symbols");
    std::vector<ResultTable> tables;
    for (const std::string& k : which) tables.push_back(table_of(catalog, k));
    std::string content;
    if (o->format == "csv") {
      content = render_csv(tables.front());
    } else if (o->format == "json") {
      std::vector<std::pair<std::string, const ResultTable*>> named;
      for (std::size_t i = 0; i < which.size(); ++i) named.emplace_back(which[i], &tables[i]);
      content = render_json(OutputContext{"catalog", catalog_dir, {}}, named);
    } else {
      content = render_key_values({{"catalog", catalog_dir}});
      for (std::size_t i = 0; i < which.size(); ++i) {
        content +=
            "\n" + which[i] + " (" + std::to_string(tables[i].rows.size()) + "):\n" + render_text(tables[i]);
      }
    }
    emit_output(content, o->out);
  });
}

}  // namespace moetwin::cli
