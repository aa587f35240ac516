// Figures through gnuplot (Debian gnuplot-nox), run as a subprocess on a generated script and data files
// in a fresh temporary directory. Output is deterministic: fixed terminal size and font, numbers written
// with format_exact, no timestamps (gnuplot's SVG carries none).
#pragma once

#include <string>
#include <vector>

#include "moetwin/reports/report_figures.hpp"

namespace moetwin {

enum class FigureFormat { svg, png };

struct GnuplotFile {
  std::string name;
  std::string content;
};
// A script reading its data files by name (relative to the run directory) and writing `output`.
struct GnuplotJob {
  std::string script;
  std::vector<GnuplotFile> data;
  std::string output = "figure.out";
};

// $MOETWIN_GNUPLOT if set, else "gnuplot", resolved on PATH; "" when not found.
std::string find_gnuplot();
// Runs the job and returns the bytes of its output file. Throws InputError when gnuplot is missing
// ("gnuplot not found: install the Debian package gnuplot-nox ...") and std::runtime_error, with
// gnuplot's stderr, when it fails.
std::string run_gnuplot(const GnuplotJob& job);

// Quotes text for a gnuplot single-quoted string.
std::string gnuplot_quote(const std::string& text);

// The scripts of the four figures (pure: tests read them).
GnuplotJob nodes_job(const NodesFigure& figure, FigureFormat format);
GnuplotJob breakdown_job(const BreakdownFigure& figure, FigureFormat format);
GnuplotJob scatter_job(const ScatterFigure& figure, FigureFormat format);
GnuplotJob pareto_job(const ParetoFigure& figure, FigureFormat format);

}  // namespace moetwin
