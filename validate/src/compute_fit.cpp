// GEMM-class time per GPU and precision fitted on dense rows, with leave-one-system-out (compute_fit.hpp).
#include "moetwin/validate/compute_fit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <set>
#include <sstream>
#include <thread>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {
namespace {

constexpr int kSecantSteps = 6;
constexpr double kConverged = 1e-3;  // relative move of the scale that ends the secant steps
constexpr double kProbe = 1.25;      // second point of the first linear model, x the start

std::string term_name(const std::string& gpu, const std::string& precision) {
  return concat({gpu, "/", precision});
}

double clamp_scale(double s) {
  return std::clamp(s, kGemmTimeScaleMin, kGemmTimeScaleMax);
}

void scale_curve(GemmEfficiencyCurve& c, double scale) {
  for (double& e : c.efficiency) e /= scale;
}

void scale_calibration(std::optional<ComputeCalibration>& cal, double scale) {
  if (!cal) return;
  for (const OpClass cls : {OpClass::gemm, OpClass::grouped_gemm, OpClass::attention}) {
    scale_curve(cal->curve[static_cast<int>(cls)], scale);
    scale_curve(cal->small_k[static_cast<int>(cls)], scale);
  }
  for (AttentionKernelCurve& k : cal->attention_kernels) {
    for (double& e : k.efficiency) e /= scale;
  }
}

// Mean squared log ratio of the linear model a + b s against the measured times.
double linear_loss(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& m,
                   double s) {
  double sum = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    const double t = std::max(a[i] + b[i] * s, 1e-12);
    const double l = std::log(t / m[i]);
    sum += l * l;
  }
  return sum / static_cast<double>(m.size());
}

// Minimiser of linear_loss over [min, max] by golden section in log(s) (the loss is unimodal in s for
// positive slopes: each term's log ratio is increasing).
double minimise_linear(const std::vector<double>& a, const std::vector<double>& b,
                       const std::vector<double>& m) {
  double lo = std::log(kGemmTimeScaleMin), hi = std::log(kGemmTimeScaleMax);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = linear_loss(a, b, m, std::exp(x1)), f2 = linear_loss(a, b, m, std::exp(x2));
  for (int it = 0; it < 80; ++it) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = linear_loss(a, b, m, std::exp(x1));
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = linear_loss(a, b, m, std::exp(x2));
    }
  }
  return std::exp((lo + hi) / 2);
}

struct TermFit {
  double value = 1;
  int rows = 0;
  int replays = 0;
};

// Fits one term on rows `which` (all of one GPU and precision). Rows whose replay fails are dropped.
TermFit fit_term(const std::vector<LiveRun>& runs, std::vector<std::size_t> which,
                 const FittedProfile& profile, int threads) {
  TermFit out;
  auto replay = [&](double s) {
    ++out.replays;
    return predict_scaled(runs, which, std::vector<double>(which.size(), s), profile, threads);
  };
  double s0 = 1;
  std::vector<double> t0 = replay(s0);
  // Rows the replay refuses take no part.
  std::vector<std::size_t> kept;
  std::vector<double> kept_t0;
  for (std::size_t k = 0; k < which.size(); ++k) {
    if (t0[k] > 0) {
      kept.push_back(which[k]);
      kept_t0.push_back(t0[k]);
    }
  }
  which = kept;
  t0 = kept_t0;
  out.rows = static_cast<int>(which.size());
  if (which.empty()) return out;
  std::vector<double> m;
  for (const std::size_t i : which) m.push_back(runs[i].iter_s);
  double s1 = s0 * kProbe;
  std::vector<double> t1 = replay(s1);
  for (int step = 0; step < kSecantSteps; ++step) {
    std::vector<double> a(m.size()), b(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
      b[i] = std::max((t1[i] - t0[i]) / (s1 - s0), 0.0);
      a[i] = t1[i] - b[i] * s1;
    }
    const double next = clamp_scale(minimise_linear(a, b, m));
    if (std::abs(next / s1 - 1) < kConverged) {
      s1 = next;
      break;
    }
    // Keep the point nearer the minimiser as the other end of the next secant.
    if (std::abs(std::log(s1 / next)) < std::abs(std::log(s0 / next))) {
      s0 = s1;
      t0 = t1;
    }
    if (std::abs(next / s0 - 1) < kConverged) {  // back at the kept point: nothing new to learn
      s1 = s0;
      break;
    }
    s1 = next;
    t1 = replay(s1);
  }
  out.value = s1;
  return out;
}

std::string precision_name(Precision p) {
  return to_string(p);
}

}  // namespace

std::string gpu_die(const GpuSpec& gpu) {
  return concat({"compute capability ", format_fixed(gpu.compute_capability, 1)});
}

ResolvedScale ComputeFit::resolve(const Catalog& catalog, const std::string& gpu, Precision precision) const {
  const std::string p = precision_name(precision);
  for (const GemmScaleTerm& t : terms) {
    if (t.gpu == gpu && t.precision == p)
      return {t.value, concat({"fitted on ", std::to_string(t.rows), " rows"})};
  }
  const std::string die = gpu_die(catalog.gpu(gpu));
  std::vector<double> values;
  std::string names;
  for (const GemmScaleTerm& t : terms) {
    if (t.precision != p || gpu_die(catalog.gpu(t.gpu)) != die) continue;
    values.push_back(t.value);
    names += concat({names.empty() ? "" : ", ", t.gpu});
  }
  if (!values.empty()) {
    return {percentile(values, 0.5), concat({"inherited: median of ", names, " (", die, ", ", p, ")"})};
  }
  return {1, concat({"none: no ", die, " ", p, " rows fitted; today's pricing"})};
}

void scale_gemm_class_time(ComputeProfile& profile, double scale) {
  if (!(scale >= kGemmTimeScaleMin && scale <= kGemmTimeScaleMax))
    throw std::logic_error("scale_gemm_class_time: scale outside [0.5, 2.5]");
  for (const OpClass cls : {OpClass::gemm, OpClass::grouped_gemm, OpClass::attention}) {
    double& e = profile.efficiency[static_cast<int>(cls)];
    e = std::min(e / scale, kMaxKernelEfficiency);
  }
  scale_calibration(profile.calibration, scale);
  scale_calibration(profile.fp8_calibration, scale);
}

std::vector<double> predict_scaled(const std::vector<LiveRun>& runs, const std::vector<std::size_t>& which,
                                   const std::vector<double>& scales, const FittedProfile& profile,
                                   int threads) {
  std::vector<double> out(which.size(), 0);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  auto work = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= which.size() || failed.load()) return;
      const Scenario& s = runs.at(which[k]).scenario;
      try {
        PredictOptions options = predict_options_for(s, profile);
        ComputeProfile compute = compute_profile_for(s, default_calibration_dir());
        if (scales[k] != 1) scale_gemm_class_time(compute, scales[k]);
        options.seams.compute = &compute;
        out[k] = predict(s, options).iteration_s;
      } catch (const InputError&) {
        out[k] = 0;
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

ComputeFitResult fit_compute(const Catalog& catalog, const std::vector<LiveRun>& runs,
                             const FittedProfile& profile, bool leave_one_system_out, int threads,
                             const std::function<void(const std::string&)>& progress) {
  ComputeFitResult result;
  // Rows by term and by system, in row order.
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_term;
  std::set<std::string> systems;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Scenario& s = runs[i].scenario;
    by_term[{s.gpu.name, precision_name(s.training.precision)}].push_back(i);
    systems.insert(s.instance.name);
  }
  auto fit_terms = [&](const std::string& without) {
    ComputeFit fit;
    for (const auto& [key, rows] : by_term) {
      std::vector<std::size_t> use;
      for (const std::size_t i : rows)
        if (runs[i].scenario.instance.name != without) use.push_back(i);
      if (use.empty()) continue;
      const TermFit t = fit_term(runs, use, profile, threads);
      result.replays += t.replays;
      if (t.rows == 0) continue;
      fit.terms.push_back({key.first, key.second, t.value, t.rows});
      if (progress)
        progress(concat({without.empty() ? "all rows" : concat({"without ", without}), ": ",
                         term_name(key.first, key.second), " = ", format_fixed(t.value, 4), " (",
                         std::to_string(t.rows), " rows, ", std::to_string(t.replays), " replays)"}));
    }
    return fit;
  };
  result.fit = fit_terms("");
  const std::vector<std::size_t> all = [&] {
    std::vector<std::size_t> v(runs.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }();
  auto scales_of = [&](const ComputeFit& fit, const std::vector<std::size_t>& which,
                       std::vector<std::string>* sources) {
    std::vector<double> s;
    for (const std::size_t i : which) {
      const ResolvedScale r =
          fit.resolve(catalog, runs[i].scenario.gpu.name, runs[i].scenario.training.precision);
      s.push_back(r.value);
      if (sources) sources->push_back(r.source);
    }
    return s;
  };
  const std::vector<double> unfitted =
      predict_scaled(runs, all, std::vector<double>(all.size(), 1), profile, threads);
  const std::vector<double> in_sample =
      predict_scaled(runs, all, scales_of(result.fit, all, nullptr), profile, threads);
  result.replays += 2;
  result.rows.resize(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ComputeFitRow& r = result.rows[i];
    r.row = i;
    r.system = runs[i].scenario.instance.name;
    r.term = term_name(runs[i].scenario.gpu.name, precision_name(runs[i].scenario.training.precision));
    r.measured_s = runs[i].iter_s;
    r.unfitted_s = unfitted[i];
    r.in_sample_s = in_sample[i];
  }
  if (!leave_one_system_out) return result;
  for (const std::string& system : systems) {
    const ComputeFit fold = fit_terms(system);
    std::vector<std::size_t> held;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].scenario.instance.name == system) held.push_back(i);
    std::vector<std::string> sources;
    const std::vector<double> t =
        predict_scaled(runs, held, scales_of(fold, held, &sources), profile, threads);
    ++result.replays;
    for (std::size_t k = 0; k < held.size(); ++k) {
      result.rows[held[k]].held_out_s = t[k];
      result.rows[held[k]].held_out_source = sources[k];
    }
  }
  return result;
}

namespace {

double rel(double predicted, double measured) {
  return predicted > 0 ? predicted / measured - 1 : std::nan("");
}

std::string pct(double x) {
  return std::isfinite(x) ? concat({format_fixed(100 * x, 1), "%"}) : std::string("-");
}

// The compute profile the replay prices `gpu`'s rows with today (compute_profile_for of its first row).
ComputeProfile pricing_of(const std::vector<LiveRun>& runs, const std::string& gpu) {
  for (const LiveRun& r : runs)
    if (r.scenario.gpu.name == gpu) return compute_profile_for(r.scenario, default_calibration_dir());
  return {};
}

// Median |error| of the rows' `pick` times, "-" when none predicted.
std::string median_abs(const std::vector<ComputeFitRow>& rows, double ComputeFitRow::*pick) {
  std::vector<double> e;
  for (const ComputeFitRow& r : rows)
    if (r.*pick > 0) e.push_back(std::abs(r.*pick / r.measured_s - 1));
  return e.empty() ? "-" : pct(percentile(e, 0.5));
}

}  // namespace

std::string compute_fit_report(const Catalog& catalog, const std::vector<LiveRun>& runs,
                               const ComputeFitResult& result) {
  std::ostringstream o;
  o << "gemm_time_scale [GPU x precision] (x, bounds [" << format_exact(kGemmTimeScaleMin) << ", "
    << format_exact(kGemmTimeScaleMax) << "]): GEMM-class kernel time over today's pricing\n";
  for (const GemmScaleTerm& t : result.fit.terms) {
    const GpuSpec& g = catalog.gpu(t.gpu);
    o << "  " << term_name(t.gpu, t.precision) << " = " << format_fixed(t.value, 3) << " (" << t.rows
      << " rows; ";
    // Today's pricing as the replay looked it up for this GPU's rows (its own profile, a borrowed one, or
    // the catalog), not guessed from the catalog.
    const ComputeProfile today = pricing_of(runs, t.gpu);
    if (!today.calibration) {
      // A quantized recipe's GEMMs run at the class efficiency x the recipe's relative one
      // (compute_model.hpp): the implied value is that product over the term, a fraction of the recipe's
      // peak.
      const double relative = t.precision == "nvfp4"   ? g.fp4_relative_efficiency
                              : t.precision == "mxfp8" ? g.mxfp8_relative_efficiency
                              : t.precision == "bf16"  ? 1.0
                                                       : g.fp8_relative_efficiency;
      const double eff = g.efficiency.at("gemm");
      o << "catalog gemm efficiency " << format_fixed(eff, 3);
      if (relative != 1.0) o << " x relative " << format_fixed(relative, 3);
      o << " -> implied " << format_fixed(std::min(eff * relative / t.value, kMaxKernelEfficiency), 3)
        << " of the " << t.precision << " peak";
    } else {
      o << today.source << " x " << format_fixed(t.value, 3) << " in time";
    }
    o << ")\n";
  }
  std::map<std::string, std::vector<ComputeFitRow>> by_system;
  for (const ComputeFitRow& r : result.rows) by_system[r.system].push_back(r);
  o << "\nmedian |error| per system: today / in sample / leave-one-system-out\n";
  for (const auto& [system, rows] : by_system) {
    o << "  " << system << " (" << rows.size() << " rows): " << median_abs(rows, &ComputeFitRow::unfitted_s)
      << " / " << median_abs(rows, &ComputeFitRow::in_sample_s) << " / "
      << median_abs(rows, &ComputeFitRow::held_out_s) << "\n";
  }
  o << "  all (" << result.rows.size() << " rows): " << median_abs(result.rows, &ComputeFitRow::unfitted_s)
    << " / " << median_abs(result.rows, &ComputeFitRow::in_sample_s) << " / "
    << median_abs(result.rows, &ComputeFitRow::held_out_s) << "\n";
  o << "\nrows: scenario, term, measured s, today, in sample, held out (term source)\n";
  for (const ComputeFitRow& r : result.rows) {
    o << "  " << runs[r.row].scenario.name << " " << runs[r.row].scenario.model.name << " " << r.term << " "
      << format_fixed(r.measured_s, 3) << " s: " << pct(rel(r.unfitted_s, r.measured_s)) << ", "
      << pct(rel(r.in_sample_s, r.measured_s)) << ", " << pct(rel(r.held_out_s, r.measured_s))
      << (r.held_out_source.empty() ? "" : concat({" (", r.held_out_source, ")"})) << "\n";
  }
  return o.str();
}

std::string compute_fit_toml(const ComputeFitResult& result, const std::string& fitted_on) {
  std::ostringstream o;
  o << "# moetwin compute fit (written by `moetwin validate --fit-compute`; format: "
       "validate/include/moetwin/validate/compute_fit.hpp).\n"
    << "# GEMM-class kernel time per GPU and precision over the twin's pricing, fitted on dense rows. Not "
       "the\n"
    << "# shipped default: `predict --compute-fit FILE` applies it.\n"
    << "schema = \"moetwin-compute-fit-1\"\n"
    << "fitted_on = \"" << fitted_on << "\"\n\n";
  for (const GemmScaleTerm& t : result.fit.terms) {
    o << "[[gemm_time_scale]]\n"
      << "gpu = \"" << t.gpu << "\"\n"
      << "precision = \"" << t.precision << "\"\n"
      << "value = " << format_exact(t.value) << "\n"
      << "unit = \"x\"\n"
      << "min = " << format_exact(kGemmTimeScaleMin) << "\n"
      << "max = " << format_exact(kGemmTimeScaleMax) << "\n"
      << "rows = " << t.rows << "\n\n";
  }
  std::vector<double> in, out;
  for (const ComputeFitRow& r : result.rows) {
    if (r.in_sample_s > 0) in.push_back(std::abs(r.in_sample_s / r.measured_s - 1));
    if (r.held_out_s > 0) out.push_back(std::abs(r.held_out_s / r.measured_s - 1));
  }
  o << "[errors]  # median |predicted / measured - 1|\n"
    << "rows = " << result.rows.size() << "\n"
    << "in_sample = " << format_exact(in.empty() ? 0 : percentile(in, 0.5)) << "\n"
    << "leave_one_system_out = " << format_exact(out.empty() ? 0 : percentile(out, 0.5)) << "\n";
  return o.str();
}

ComputeFit load_compute_fit(const std::string& path) {
  const toml::table root = parse_toml(read_text_file(path, input_kind::toml), path);
  StrictTable t(root, path, "");
  if (t.choice("schema", {"moetwin-compute-fit-1"}).empty()) return {};
  (void)t.string("fitted_on");
  ComputeFit fit;
  for (StrictTable& term : t.tables("gemm_time_scale")) {
    GemmScaleTerm g;
    g.gpu = term.string("gpu");
    g.precision = term.choice("precision", precision_names());
    (void)term.choice("unit", {"x"});
    (void)term.number("min", kGemmTimeScaleMin, kGemmTimeScaleMin);
    (void)term.number("max", kGemmTimeScaleMax, kGemmTimeScaleMax);
    g.value = term.number("value", kGemmTimeScaleMin, kGemmTimeScaleMax);
    g.rows = term.int32("rows", 1, 1 << 30);
    for (const GemmScaleTerm& other : fit.terms) {
      if (other.gpu == g.gpu && other.precision == g.precision)
        throw InputError(
            term.where("gpu"), term.name("gpu"), concat({"\"", g.gpu, "\""}),
            concat({"one term per GPU and precision (", g.gpu, "/", g.precision, " is there already)"}));
    }
    term.finish();
    fit.terms.push_back(std::move(g));
  }
  if (auto e = t.table("errors")) {
    (void)e->int32("rows", 0, 1 << 30);
    (void)e->number("in_sample", 0, 1e9);
    (void)e->number("leave_one_system_out", 0, 1e9);
    e->finish();
  }
  t.finish();
  return fit;
}

}  // namespace moetwin
