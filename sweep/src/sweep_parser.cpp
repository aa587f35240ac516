// The sweep language: TOML -> SweepSpec (format in sweep/README.md). The base scenario is read by the
// scenario parser itself (scenario_parser.hpp), so a base is held to exactly the rules of a scenario file;
// the grid's axes are checked here, value by value, and the points they combine into are checked one by
// one when they are built (grid.cpp), where a broken rule makes an invalid point, not an error.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

// At most this many points: a larger grid is almost certainly a typo, and point ids are kept in
// journals and outputs as plain integers.
constexpr std::size_t kMaxPoints = 10'000'000;
constexpr int kMaxParallel = 1 << 20;  // as the scenario parser's upper bound of each parallel size

const char* const kScenarioTables[] = {"model",      "cluster", "parallelism", "training",
                                       "dispatcher", "routing", "calibration"};
const char* const kGridKeys[] = {"model",       "instance",     "nodes",     "layouts",
                                 "micro_batch", "global_batch", "recompute", "overlap_moe_a2a",
                                 "routing",     "dispatcher",   "overlap_on"};

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> out;
  for (const auto& [k, _] : map) out.push_back(k);
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

int line_of(const toml::node& node) {
  return static_cast<int>(node.source().begin.line);
}

// Marks every line of `node` and its descendants (keys included) in `lines` (1-based).
void mark_lines(const toml::node& node, std::vector<bool>& lines) {
  const auto mark = [&lines](std::size_t begin, std::size_t end) {
    for (std::size_t l = begin; l <= end && l < lines.size(); ++l) lines[l] = true;
  };
  mark(node.source().begin.line, std::max(node.source().begin.line, node.source().end.line));
  if (const toml::table* t = node.as_table()) {
    for (const auto& [key, value] : *t) {
      mark(key.source().begin.line, key.source().begin.line);
      mark_lines(value, lines);
    }
  } else if (const toml::array* a = node.as_array()) {
    for (const toml::node& element : *a) mark_lines(element, lines);
  }
}

// The sweep text with the [grid] lines blanked out (line numbers kept), so that the scenario parser can
// read the inline base and report its errors at the lines of the sweep file.
std::string inline_base_text(const std::string& text, const toml::table& root, const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<bool> blank(lines.size() + 2, false);
  for (const auto& [key, value] : root) {
    if (key.str() != "grid") continue;
    const std::size_t key_line = key.source().begin.line;
    if (key_line < blank.size()) blank[key_line] = true;
    mark_lines(value, blank);
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (blank[i + 1] ? std::string() : lines[i]) + "\n";
  // Blanking whole lines is exact because TOML puts every key on the line where its value starts and a
  // table header on a line of its own; a leftover key means that reasoning broke, which is a bug.
  if (parse_toml(out, path).contains("grid")) throw std::logic_error("sweep: [grid] survived masking");
  return out;
}

[[noreturn]] void fail_element(const std::string& path, const toml::node& node, const std::string& key,
                               std::size_t index, const std::string& expected) {
  throw InputError({path, line_of(node)}, "grid." + key + "[" + std::to_string(index) + "]",
                   describe_toml_value(node), expected);
}

class GridReader {
 public:
  GridReader(const toml::table& grid, std::string path, const Catalog& catalog, const Scenario& base)
      : grid_(grid), path_(std::move(path)), catalog_(catalog), base_(base) {}

  // The axis array of `key`, or nullptr when absent. Non-arrays and empty arrays are errors.
  const toml::array* axis(const std::string& key, const std::string& what) const {
    const toml::node* node = grid_.get(key);
    if (!node) return nullptr;
    const toml::array* a = node->as_array();
    if (!a || a->empty()) {
      throw InputError({path_, line_of(*node)}, "grid." + key, a ? "[]" : describe_toml_value(*node),
                       "a non-empty array of " + what);
    }
    return a;
  }

  // Throws when the rendered value `value` of element `index` repeats an earlier one.
  void check_unique(const std::string& key, const std::vector<std::string>& seen, const toml::node& node,
                    std::size_t index) const {
    for (std::size_t j = 0; j < index; ++j) {
      if (seen[j] == seen[index]) {
        fail_element(path_, node, key, index,
                     "a value not already listed (same as grid." + key + "[" + std::to_string(j) + "])");
      }
    }
  }

  std::vector<std::string> strings(const std::string& key, const std::vector<std::string>& allowed) const {
    std::vector<std::string> out;
    const toml::array* a = axis(key, "strings");
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      const auto* s = n.as_string();
      if (!s) fail_element(path_, n, key, i, "a string");
      if (std::find(allowed.begin(), allowed.end(), s->get()) == allowed.end()) {
        fail_element(path_, n, key, i, "one of " + join(allowed));
      }
      out.push_back(s->get());
      check_unique(key, out, n, i);
    }
    return out;
  }

  std::vector<int> integers(const std::string& key, int min, int max) const {
    std::vector<int> out;
    std::vector<std::string> seen;
    const toml::array* a = axis(key, "integers");
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      const auto* v = n.as_integer();
      if (!v || v->get() < min || v->get() > max) {
        fail_element(path_, n, key, i,
                     "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
      }
      out.push_back(static_cast<int>(v->get()));
      seen.push_back(std::to_string(v->get()));
      check_unique(key, seen, n, i);
    }
    return out;
  }

  std::vector<int> booleans(const std::string& key) const {
    std::vector<int> out;
    std::vector<std::string> seen;
    const toml::array* a = axis(key, "booleans");
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      const auto* v = n.as_boolean();
      if (!v) fail_element(path_, n, key, i, "true or false");
      out.push_back(v->get() ? 1 : 0);
      seen.push_back(v->get() ? "true" : "false");
      check_unique(key, seen, n, i);
    }
    return out;
  }

  // An element of an array of inline tables, as a StrictTable prefixed "grid.key[i].".
  StrictTable element_table(const std::string& key, const toml::node& n, std::size_t i) const {
    const toml::table* t = n.as_table();
    if (!t) fail_element(path_, n, key, i, "an inline table");
    return StrictTable(*t, path_, "grid." + key + "[" + std::to_string(i) + "].");
  }

  std::vector<LayoutChoice> layouts() const {
    std::vector<LayoutChoice> out;
    std::vector<std::string> seen;
    const toml::array* a = axis("layouts", "inline tables {tp, pp, vpp, ep, etp, cp}");
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      StrictTable t = element_table("layouts", n, i);
      if (t.has("dp")) {
        throw InputError(t.where("dp"), t.name("dp"), describe_toml_value(*n.as_table()->get("dp")),
                         "no dp key (each point derives dp = gpus / (tp * pp * cp))");
      }
      const ParallelLayout sizes = parse_parallel_sizes(t);
      t.finish();
      const LayoutChoice c{sizes.tp, sizes.pp, sizes.vpp, sizes.ep, sizes.etp, sizes.cp, line_of(n)};
      out.push_back(c);
      seen.push_back(std::to_string(c.tp) + "/" + std::to_string(c.pp) + "/" + std::to_string(c.vpp) + "/" +
                     std::to_string(c.ep) + "/" + std::to_string(c.etp) + "/" + std::to_string(c.cp));
      check_unique("layouts", seen, n, i);
    }
    return out;
  }

  std::vector<RoutingConfig> routings() const {
    std::vector<RoutingConfig> out;
    std::vector<std::string> seen;
    const toml::array* a = axis("routing", "inline tables {kind, zipf_exponent, histogram, seed}");
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      StrictTable t = element_table("routing", n, i);
      out.push_back(read_routing(t));
      const RoutingConfig& r = out.back();
      seen.push_back(std::string(to_string(r.kind)) + "/" + format_exact(r.zipf_exponent) + "/" +
                     r.histogram_path + "/" + std::to_string(r.seed));
      check_unique("routing", seen, n, i);
    }
    return out;
  }

  OverlapOn overlap_on() const {
    OverlapOn out;
    const toml::node* node = grid_.get("overlap_on");
    if (!node) return out;
    const toml::table* t = node->as_table();
    if (!t) {
      throw InputError({path_, line_of(*node)}, "grid.overlap_on", describe_toml_value(*node),
                       "a table {vpp, recompute}");
    }
    StrictTable s(*t, path_, "grid.overlap_on.");
    if (s.has("vpp")) out.vpp = s.int32("vpp", 1, kMaxParallel);
    if (s.has("recompute")) {
      out.recompute =
          static_cast<Recompute>(recompute_of(s.choice("recompute", {"none", "selective", "full"})));
    }
    s.finish();
    return out;
  }

  void reject_unknown_keys() const {
    for (const auto& [key, value] : grid_) {
      const std::string k(key.str());
      if (std::find(std::begin(kGridKeys), std::end(kGridKeys), k) == std::end(kGridKeys)) {
        throw InputError(
            {path_, static_cast<int>(key.source().begin.line)}, "grid." + k, describe_toml_value(value),
            "a known axis (" + join(std::vector<std::string>(std::begin(kGridKeys), std::end(kGridKeys))) +
                ")");
      }
    }
  }

  static int recompute_of(const std::string& s) {
    return static_cast<int>(s == "full"        ? Recompute::full
                            : s == "selective" ? Recompute::selective
                                               : Recompute::none);
  }

 private:
  RoutingConfig read_routing(StrictTable& t) const {
    return parse_routing_table(t, path_, "sweep file", "", base_.routing.seed);
  }

  const toml::table& grid_;
  std::string path_;
  [[maybe_unused]] const Catalog& catalog_;  // unread today: clang -Wunused-private-field
  const Scenario& base_;
};

std::string default_name(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  return stem.empty() ? "sweep" : stem;
}

}  // namespace

const std::vector<std::string>& sweep_axis_names() {
  static const std::vector<std::string> names = {
      "model",        "instance",  "nodes",           "layouts", "micro_batch",
      "global_batch", "recompute", "overlap_moe_a2a", "routing", "dispatcher"};
  return names;
}

std::vector<std::size_t> SweepSpec::axis_sizes() const {
  return {models.size(),         instances.size(),  nodes.size(),    layouts.size(),  micro_batches.size(),
          global_batches.size(), recomputes.size(), overlaps.size(), routings.size(), dispatchers.size()};
}

std::size_t SweepSpec::point_count() const {
  std::size_t n = 1;
  for (std::size_t s : axis_sizes()) n *= s;
  return n;
}

SweepSpec parse_sweep(const std::string& toml_text, const std::string& path, const Catalog& catalog) {
  const toml::table root = parse_toml(toml_text, path);
  StrictTable top(root, path, "");
  SweepSpec spec;
  spec.path = path;
  spec.name = top.string_or("name", default_name(path));
  if (spec.name.empty())
    throw InputError(top.where("name"), "name", "\"\"", "a non-empty name (or no name key)");
  spec.description = top.string_or("description", "");
  const std::string base_file = top.string_or("base", "");
  bool inline_base = false;
  for (const char* table : kScenarioTables) {
    if (!top.has(table)) continue;
    if (top.has("base")) {
      throw InputError(top.where(table), table, "a table",
                       "no inline scenario table together with base = \"" + base_file +
                           "\" (the base is either a file or inline tables)");
    }
    top.table(table);
    inline_base = true;
  }
  std::optional<StrictTable> grid_table = top.table("grid");
  top.finish();

  std::string hashed = toml_text;
  if (top.has("base")) {
    const fs::path resolved =
        fs::path(base_file).is_absolute() ? fs::path(base_file) : fs::path(path).parent_path() / base_file;
    std::error_code ec;
    if (base_file.empty() || !fs::is_regular_file(resolved, ec)) {
      throw InputError(
          top.where("base"), "base", "\"" + base_file + "\"",
          "an existing scenario file, relative to the sweep file (looked for " + resolved.string() + ")");
    }
    spec.base_path = resolved.string();
    const std::string base_text = read_text_file(spec.base_path, input_kind::toml);
    spec.base = parse_scenario(base_text, spec.base_path, catalog);
    hashed += base_text;
  } else if (inline_base) {
    spec.base = parse_scenario(inline_base_text(toml_text, root, path), path, catalog);
  } else {
    throw InputError({path, 0}, "base", "missing",
                     "a base scenario: base = \"scenario.toml\" or inline [model], [cluster], [parallelism] "
                     "and [training] tables");
  }
  spec.content_hash = hex64(fnv1a64(hashed));

  const Scenario& b = spec.base;
  spec.models = {b.model};
  spec.instances = {b.instance};
  spec.instance_gpus = {b.gpu};
  spec.nodes = {b.nodes};
  spec.layouts = {LayoutChoice{b.parallel.tp, b.parallel.pp, b.parallel.vpp, b.parallel.ep, b.parallel.etp,
                               b.parallel.cp, 0}};
  spec.micro_batches = {b.training.micro_batch};
  spec.global_batches = {b.training.global_batch};
  spec.recomputes = {static_cast<int>(b.training.recompute)};
  spec.overlaps = {b.training.overlap_moe_a2a ? 1 : 0};
  spec.routings = {b.routing};
  spec.dispatchers = {b.dispatcher};

  if (grid_table) {
    const toml::table& grid = *root.get("grid")->as_table();
    spec.grid_line = line_of(grid);
    GridReader g(grid, path, catalog, spec.base);
    g.reject_unknown_keys();
    if (auto v = g.strings("model", names_of(catalog.models())); !v.empty()) {
      spec.models.clear();
      for (const auto& n : v) spec.models.push_back(catalog.model(n));
    }
    if (auto v = g.strings("instance", names_of(catalog.instances())); !v.empty()) {
      spec.instances.clear();
      spec.instance_gpus.clear();
      for (const auto& n : v) {
        spec.instances.push_back(catalog.instance(n));
        spec.instance_gpus.push_back(catalog.gpu(spec.instances.back().gpu));
      }
    }
    if (auto v = g.integers("nodes", 1, 100000); !v.empty()) spec.nodes = v;
    if (auto v = g.layouts(); !v.empty()) spec.layouts = v;
    if (auto v = g.integers("micro_batch", 1, 1 << 20); !v.empty()) spec.micro_batches = v;
    if (auto v = g.integers("global_batch", 1, 1 << 30); !v.empty()) spec.global_batches = v;
    if (auto v = g.strings("recompute", {"none", "selective", "full"}); !v.empty()) {
      spec.recomputes.clear();
      for (const auto& n : v) spec.recomputes.push_back(GridReader::recompute_of(n));
    }
    if (auto v = g.booleans("overlap_moe_a2a"); !v.empty()) spec.overlaps = v;
    if (auto v = g.routings(); !v.empty()) spec.routings = v;
    if (auto v = g.strings("dispatcher", names_of(catalog.dispatchers())); !v.empty()) {
      spec.dispatchers.clear();
      for (const auto& n : v) spec.dispatchers.push_back(catalog.dispatcher(n));
    }
    spec.overlap_on = g.overlap_on();
  }

  // Checked axis by axis so that the product never overflows.
  std::size_t count = 1;
  for (std::size_t s : spec.axis_sizes()) {
    count *= s;
    if (count > kMaxPoints) {
      throw InputError({path, spec.grid_line}, "grid", "more than " + std::to_string(kMaxPoints) + " points",
                       "at most " + std::to_string(kMaxPoints) + " points (the product of the axis sizes)");
    }
  }
  return spec;
}

SweepSpec load_sweep_file(const std::string& path, const Catalog& catalog) {
  return parse_sweep(read_text_file(path, input_kind::toml), path, catalog);
}

}  // namespace moetwin
