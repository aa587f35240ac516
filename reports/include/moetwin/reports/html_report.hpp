// `moetwin report`: one self-contained HTML file (figures as base64 SVG data URIs, inline CSS, no
// scripts, no external URLs) and optionally Markdown with PNG figures, from plan / sweep / validate /
// recommend outputs. Order: summary and recommendation, figures, tables, context (version, profile,
// seed, inputs with SHA-256, date). The date line is the only content that differs between two renders
// of the same inputs.
#pragma once

#include <string>
#include <vector>

#include "moetwin/reports/gnuplot.hpp"
#include "moetwin/reports/report_input.hpp"

namespace moetwin {

struct ReportOptions {
  std::string title = "moetwin report";
  std::string generated_utc;  // e.g. "2026-11-29T12:00:00Z": the date line
  std::string profile;        // profile label to show; "" = what the inputs recorded
};

// One figure of the report: its caption and the gnuplot jobs drawing it.
struct ReportFigureSpec {
  std::string id;  // "nodes-1", "breakdown-1", "scatter-1", "pareto-1" (1 = input index + 1)
  std::string caption;
  GnuplotJob svg;
  GnuplotJob png;
};

// The figures the inputs give, in report order: iteration time vs nodes, breakdowns, predicted vs
// measured, Pareto fronts (each kind over all inputs, inputs in command-line order).
std::vector<ReportFigureSpec> report_figures(const std::vector<ReportInput>& inputs);
// Plain-text summary lines of one input (the report's first section).
std::vector<std::string> summary_lines(const ReportInput& input);
// The line that carries the date (the only line that differs between renders), without newline.
std::string date_line(const std::string& generated_utc);

// Runs gnuplot for every figure (SVG). Throws like run_gnuplot.
std::string render_html_report(const std::vector<ReportInput>& inputs, const ReportOptions& options);
// Writes DIR/report.md and DIR/<figure id>.png (gnuplot pngcairo); creates DIR, not its parent: a missing
// parent folder is an InputError, as for --out.
void write_markdown_report(const std::vector<ReportInput>& inputs, const ReportOptions& options,
                           const std::string& dir);

std::string html_escape(const std::string& text);
std::string base64_encode(const std::string& bytes);

}  // namespace moetwin
