#include "moetwin/reports/gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

extern char** environ;

namespace moetwin {
namespace {

namespace fs = std::filesystem;

// Colour-blind-safe palette (Okabe & Ito 2008), one colour per series in order.
const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                          "#E69F00", "#56B4E9", "#F0E442", "#000000"};
const char* colour(std::size_t i) {
  return kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
}

std::string num(double v) {
  return std::isfinite(v) ? format_exact(v) : std::string("NaN");
}

// Fixed size and font: the same input draws the same bytes on every machine with this gnuplot.
// `extra_height` (SVG pixels; the PNG is 1.5x) makes room below the plot for long rotated labels.
std::string preamble(FigureFormat format, const std::string& output, int extra_height = 0) {
  std::string s;
  if (format == FigureFormat::svg) {
    s = "set terminal svg size 900," + std::to_string(520 + extra_height) +
        " fixed font 'DejaVu Sans,13' background '#ffffff'\n";
  } else {
    s = "set terminal pngcairo size 1350," + std::to_string(780 + extra_height * 3 / 2) +
        " font 'DejaVu Sans,13' background '#ffffff'\n";
  }
  return s + "set output '" + output + "'\nset encoding utf8\nset termoption noenhanced\n" +
         "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n" +
         // Left-justified names after their samples, with room: gnuplot's width estimate for
         // right-justified key text clipped long dispatcher names (deepep-nvshmem) at the box edge.
         "set key outside right top box Left reverse width 2\n";
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "moetwin-gnuplot-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory under " + tmpl);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// Tick values for a log axis over [lo, hi]: 1-2-5 per decade, 1-1.5-2-3-5-7 when the range is under a
// decade and a half (gnuplot labels only whole decades, which leaves 3.7 .. 43 s with the one label "10").
std::string log_tics(double lo, double hi) {
  const bool narrow = hi < 15 * lo;
  const std::vector<double> steps =
      narrow ? std::vector<double>{1, 1.5, 2, 3, 5, 7} : std::vector<double>{1, 2, 5};
  std::string out;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10) {
    for (double m : steps) {
      const double v = m * decade;
      if (v < lo || v > hi) continue;
      out.append(out.empty() ? "" : ", ").append(format_significant(v, 3));
    }
  }
  return "(" + out + ")";
}

}  // namespace

std::string find_gnuplot() {
  const char* env = std::getenv("MOETWIN_GNUPLOT");
  const std::string name = env && *env ? env : "gnuplot";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out + "'";
}

std::string run_gnuplot(const GnuplotJob& job) {
  const std::string exe = find_gnuplot();
  if (exe.empty()) {
    throw InputError({"", 0},
                     "gnuplot not found (PATH or $MOETWIN_GNUPLOT): install the Debian package "
                     "gnuplot-nox (bash bootstrap.sh installs it)");
  }
  TempDir dir;
  for (const GnuplotFile& f : job.data) write_file(dir.path / f.name, f.content);
  write_file(dir.path / "figure.gp", job.script);
  const std::string err_path = (dir.path / "stderr.txt").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  // gnuplot resolves the data and output names against its working directory: the script cd's there.
  const std::string script = (dir.path / "figure.gp").string();
  std::string arg0 = exe, arg1 = "-e", arg2 = "cd " + gnuplot_quote(dir.path.string()), arg3 = script;
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), arg3.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + exe);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  std::string errors;
  {
    std::ifstream e(err_path, std::ios::binary);
    errors.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("gnuplot failed on a generated figure script: " + errors);
  }
  std::ifstream in(dir.path / job.output, std::ios::binary);
  if (!in) throw std::runtime_error("gnuplot wrote no " + job.output + ": " + errors);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

GnuplotJob nodes_job(const NodesFigure& f, FigureFormat format) {
  GnuplotJob job;
  job.output = format == FigureFormat::svg ? "figure.svg" : "figure.png";
  std::string s = preamble(format, job.output);
  s += "set title " + gnuplot_quote("Iteration time vs nodes: " + f.title) + "\n";
  s += "set xlabel 'nodes'\nset ylabel 'iteration time (s)'\nset logscale x 2\n";
  // Ticks at the node counts themselves (log2 axis: gnuplot's automatic ticks fall between them).
  std::vector<double> xs;
  for (const Series& se : f.series) {
    for (const BandPoint& p : se.points) xs.push_back(p.x);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::string tics;
  for (double x : xs) tics += (tics.empty() ? "" : ", ") + num(x);
  if (!tics.empty()) s += "set xtics (" + tics + ")\n";
  // One node count: the series' error bars would lie on one line; each is drawn a little to the side
  // (a fixed fraction of a doubling on the log2 axis), the axis spanning half a doubling either way.
  const bool one_x = xs.size() == 1;
  if (one_x) s += "set xrange [" + num(xs[0] / std::sqrt(2.0)) + ":" + num(xs[0] * std::sqrt(2.0)) + "]\n";
  s += "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n";
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  for (const Series& se : f.series) {
    for (const BandPoint& p : se.points) {
      for (double v : {p.y, p.lo, p.hi}) {
        if (std::isfinite(v) && v > 0) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
  }
  if (wants_log_axis(lo, hi)) {
    // The range of the data, not whole decades: 3.7 .. 43 s would otherwise be drawn on 0.1 .. 1000.
    s += "set logscale y\nset ylabel 'iteration time (s, log scale)'\nset yrange [" + num(lo / 1.15) + ":" +
         num(hi * 1.15) + "]\nset ytics " + log_tics(lo / 1.15, hi * 1.15) + "\n";
  }
  for (std::size_t i = 0; i < f.crossovers.size(); ++i) {
    const Crossover& c = f.crossovers[i];
    s += "set arrow from " + num(c.x) + ", graph 0 to " + num(c.x) +
         ", graph 1 nohead dt 2 lc rgb '#777777'\n";
    s += "set label " + gnuplot_quote(c.faster_after + " overtakes " + c.faster_before) + " at " + num(c.x) +
         ", graph " + num(0.96 - 0.05 * static_cast<double>(i % 6)) + " left offset 0.5,0 font ',10'\n";
  }
  std::string plot;
  for (std::size_t i = 0; i < f.series.size(); ++i) {
    const Series& se = f.series[i];
    const std::string file = "series" + std::to_string(i) + ".dat";
    std::string data = "# nodes iteration_s lo_s hi_s\n";
    bool band = true;
    const double n = static_cast<double>(f.series.size());
    const double dodge = one_x ? std::exp2(0.08 * (static_cast<double>(i) - (n - 1) / 2)) : 1.0;
    for (const BandPoint& p : se.points) {
      data += num(p.x * dodge) + " " + num(p.y) + " " + num(p.lo) + " " + num(p.hi) + "\n";
      band = band && std::isfinite(p.lo) && std::isfinite(p.hi);
    }
    job.data.push_back({file, data});
    const std::string lc = std::string("lc rgb '") + colour(i) + "'";
    // A band needs two node counts to be an area; at one node count it is an error bar.
    if (band && se.points.size() > 1) {
      plot += (plot.empty() ? "" : ", ") + std::string("'") + file +
              "' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder " + lc + " notitle";
    } else if (band) {
      plot += (plot.empty() ? "" : ", ") + std::string("'") + file + "' using 1:2:3:4 with yerrorbars lw 2 " +
              lc + " notitle";
    }
    plot += (plot.empty() ? "" : ", ") + std::string("'") + file + "' using 1:2 with linespoints lw 2 pt 7 " +
            lc + " title " + gnuplot_quote(se.name);
  }
  s += "plot " + plot + "\n";
  job.script = s;
  return job;
}

GnuplotJob breakdown_job(const BreakdownFigure& f, FigureFormat format) {
  GnuplotJob job;
  job.output = format == FigureFormat::svg ? "figure.svg" : "figure.png";
  // Labels rotated to end under their bar (right-aligned): none runs off the right edge; the bottom margin
  // grows with the longest label, and the figure with it beyond 30 characters (about 6 px per character at
  // 10 points, sin 60), so the bars keep their height.
  std::size_t longest = 0;
  for (const std::string& b : f.bars) longest = std::max(longest, b.size());
  const int extra = longest > 30 ? static_cast<int>(longest - 30) * 6 : 0;
  std::string s = preamble(format, job.output, extra);
  s += "set title " + gnuplot_quote(f.title) + "\n";
  s += "set ylabel 'seconds per iteration'\nset style data histograms\nset style histogram rowstacked\n";
  s += "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.7\nset xtics rotate by 60 right font "
       "',10'\n";
  // A 10-point character rotated by 60 degrees takes about 0.3 of a 13-point line height.
  s += "set yrange [0:*]\nset bmargin " + std::to_string(std::max<std::size_t>(6, longest * 3 / 10 + 3)) +
       "\nset lmargin 12\n";
  std::string data = "# label";
  for (const std::string& c : f.components) data += "\t" + c;
  data += "\n";
  for (std::size_t b = 0; b < f.bars.size(); ++b) {
    data += "\"" + f.bars[b] + "\"";
    // Not "\t" + num(v): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
    for (double v : f.values[b]) data.append("\t").append(num(v));
    data += "\n";
  }
  job.data.push_back({"bars.dat", data});
  std::string plot;
  for (std::size_t c = 0; c < f.components.size(); ++c) {
    plot += (c == 0 ? "'bars.dat' using " : ", '' using ") + std::to_string(c + 2) +
            (c == 0 ? ":xtic(1)" : "") + " lc rgb '" + colour(c) + "' title " +
            gnuplot_quote(f.components[c]);
  }
  // The iteration itself, as a black bar across each stack (and the measured one, for validate rows, as a
  // red one): the stacked maxima come from different ranks and can sum past it.
  const auto marks = [&](const std::vector<double>& t, const std::string& file, const std::string& style,
                         const std::string& title) {
    std::string d;
    for (std::size_t b = 0; b < t.size(); ++b) {
      if (std::isfinite(t[b])) d.append(std::to_string(b)).append("\t").append(num(t[b])).append("\n");
    }
    if (d.empty()) return;
    job.data.push_back({file, d});
    plot +=
        ", '" + file + "' using 1:2:(0.42) with xerrorbars pt -1 " + style + " title " + gnuplot_quote(title);
  };
  marks(f.iteration, "iteration.dat", "lw 3 lc rgb '#000000'", "iteration (predicted)");
  marks(f.measured, "measured.dat", "lw 3 dt 2 lc rgb '#D00000'", "iteration (measured)");
  s += "set datafile separator '\\t'\nplot " + plot + "\n";
  job.script = s;
  return job;
}

GnuplotJob scatter_job(const ScatterFigure& f, FigureFormat format) {
  GnuplotJob job;
  job.output = format == FigureFormat::svg ? "figure.svg" : "figure.png";
  double hi = 0;
  for (std::size_t i = 0; i < f.measured.size(); ++i) hi = std::max({hi, f.measured[i], f.predicted[i]});
  double lo = hi;
  for (std::size_t i = 0; i < f.measured.size(); ++i) lo = std::min({lo, f.measured[i], f.predicted[i]});
  std::string s = preamble(format, job.output);
  s += "set title " + gnuplot_quote(f.title) + "\n";
  if (wants_log_axis(lo, hi)) {
    // Runs from a few seconds to a minute: on linear axes the short ones pile up in a corner.
    s += "set xlabel 'measured iteration time (s, log scale)'\nset ylabel 'predicted iteration time (s, log "
         "scale)'\nset logscale xy\n";
    s += "set xrange [" + num(lo / 1.3) + ":" + num(hi * 1.3) + "]\nset yrange [" + num(lo / 1.3) + ":" +
         num(hi * 1.3) + "]\nset xtics " + log_tics(lo / 1.3, hi * 1.3) + "\nset ytics " +
         log_tics(lo / 1.3, hi * 1.3) + "\nset size ratio -1\nset samples 200\n";
  } else {
    hi *= 1.1;
    s += "set xlabel 'measured iteration time (s)'\nset ylabel 'predicted iteration time (s)'\n";
    s += "set xrange [0:" + num(hi) + "]\nset yrange [0:" + num(hi) +
         "]\nset size ratio -1\nset samples 200\n";
  }
  std::string data = "# measured_s predicted_s\n";
  for (std::size_t i = 0; i < f.measured.size(); ++i)
    data += num(f.measured[i]) + " " + num(f.predicted[i]) + "\n";
  job.data.push_back({"points.dat", data});
  s +=
      "plot '+' using 1:(0.8*$1):(1.2*$1) with filledcurves fs transparent solid 0.10 noborder "
      "lc rgb '#009E73' notitle, '+' using 1:(0.9*$1):(1.1*$1) with filledcurves fs transparent solid 0.15 "
      "noborder lc rgb '#0072B2' notitle, "
      "x*1.2 with lines dt 3 lc rgb '#009E73' title '+-20%', x*0.8 with lines dt 3 lc rgb '#009E73' notitle, "
      "x*1.1 with lines dt 2 lc rgb '#0072B2' title '+-10%', x*0.9 with lines dt 2 lc rgb '#0072B2' notitle, "
      "x with lines lc rgb '#000000' title 'predicted = measured', "
      "'points.dat' using 1:2 with points pt 7 ps 1.2 lc rgb '#D55E00' title 'runs'\n";
  job.script = s;
  return job;
}

GnuplotJob pareto_job(const ParetoFigure& f, FigureFormat format) {
  GnuplotJob job;
  job.output = format == FigureFormat::svg ? "figure.svg" : "figure.png";
  std::string s = preamble(format, job.output);
  s += "set title " + gnuplot_quote(f.title) + "\n";
  s += "set xlabel 'time to train (days)'\nset ylabel " + gnuplot_quote(f.cost_label) + "\n";
  s += "set format y '%.1s%c'\n";  // 1.9M rather than 1.9e+06
  s += "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n";
  double dlo = std::numeric_limits<double>::infinity();
  double dhi = 0;
  for (double d : f.days) {
    dlo = std::min(dlo, d);
    dhi = std::max(dhi, d);
  }
  if (wants_log_axis(dlo, dhi)) {
    const double xlo = dlo / 1.15;
    const double xhi = std::max(dhi, f.deadline_days) * 1.15;
    s += "set logscale x\nset xlabel 'time to train (days, log scale)'\nset xrange [" + num(xlo) + ":" +
         num(xhi) + "]\nset xtics " + log_tics(xlo, xhi) + "\n";
  }
  // Front points numbered in the plot (fastest first), their names in the figure's caption: full names
  // beside the points ran over the option cloud and over each other. Numbers alternate above and below
  // the line so neighbours do not collide; an opaque box keeps them readable over the options.
  s += "set style textbox opaque noborder\n";
  for (std::size_t i = 0; i < f.front_days.size(); ++i) {
    s += "set label " + gnuplot_quote(std::to_string(i + 1)) + " at " + num(f.front_days[i]) + ", " +
         num(f.front_cost[i]) + (i % 2 == 0 ? " center offset 0,1.1" : " center offset 0,-1.1") +
         " boxed front font ',11' tc rgb '#0072B2'\n";
  }
  if (f.deadline_days > 0) {
    s += "set arrow from " + num(f.deadline_days) + ", graph 0 to " + num(f.deadline_days) +
         ", graph 1 nohead lw 2 dt 2 lc rgb '#CC79A7'\n";
    s += "set label " + gnuplot_quote("deadline " + format_fixed(f.deadline_days, 0) + " days") + " at " +
         num(f.deadline_days) + ", graph 0.97 right offset -0.5,0 font ',10' tc rgb '#CC79A7'\n";
  }
  std::string all = "# days cost\n";
  for (std::size_t i = 0; i < f.days.size(); ++i) all += num(f.days[i]) + " " + num(f.cost[i]) + "\n";
  std::string front = "# days cost\n";
  for (std::size_t i = 0; i < f.front_days.size(); ++i)
    front += num(f.front_days[i]) + " " + num(f.front_cost[i]) + "\n";
  job.data.push_back({"options.dat", all});
  job.data.push_back({"front.dat", front});
  std::string plot =
      "'options.dat' using 1:2 with points pt 6 ps 1.2 lc rgb '#777777' title 'options', "
      "'front.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '#0072B2' title 'Pareto front'";
  if (f.has_recommended) {
    job.data.push_back({"recommended.dat", num(f.recommended_days) + " " + num(f.recommended_cost) + "\n"});
    plot += ", 'recommended.dat' using 1:2 with points pt 5 ps 2 lc rgb '#D55E00' title 'recommended'";
  }
  s += "plot " + plot + "\n";
  job.script = s;
  return job;
}

}  // namespace moetwin
