// The renderers of a simulation result (sim.h): JSON, text, Chrome trace and
// an SVG Gantt chart. The simulation itself is in sim.cc.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "baton/planner/analysis/sim.h"

namespace baton::planner {
namespace {

using ojson = nlohmann::ordered_json;

std::string Format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), fmt, value);
  return buffer;
}

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The names padded to one width plus two spaces, for a text column.
std::vector<std::string> NameColumn(const std::vector<std::string>& names) {
  size_t width = 0;
  for (const std::string& name : names) width = std::max(width, name.size());
  std::vector<std::string> padded;
  for (const std::string& name : names)
    padded.push_back(name + std::string(width - name.size() + 2, ' '));
  return padded;
}

// A "nice" axis step (1, 2 or 5 times a power of ten) for about `ticks` ticks.
double NiceStep(double span, int ticks) {
  if (!(span > 0)) return 1;
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// The steady-state window the chart shows: from the first start of the
// middle inference over three periods (at least its own latency), so a few
// inferences overlap. Fewer than 4 inferences: the whole run.
std::pair<double, double> GanttWindow(const SimResult& r) {
  if (r.inferences < 4 || r.throughput_per_s <= 0) return {0.0, r.makespan_s};
  const uint32_t mid = r.inferences / 2;
  double start = r.makespan_s, end = 0;
  for (const SimInstance& s : r.instances) {
    if (s.inference != mid) continue;
    start = std::min(start, s.start_s);
    end = std::max(end, s.end_s);
  }
  end = std::max(end, start + 3.0 / r.throughput_per_s);
  return {start, std::min(end, r.makespan_s)};
}

// The chart's layout in SVG user units (px): a label column, the plot (wide
// enough that the shortest node in the window is 3 px, 1000-6000 px), and
// one row per queue below the title and legends.
struct GanttLayout {
  static constexpr double kLeft = 100, kRight = 30, kTop = 56, kRow = 36, kBox = 24;

  explicit GanttLayout(const SimResult& r)
      : t0(GanttWindow(r).first),
        t1(GanttWindow(r).second),
        span_ms((t1 - t0) * 1e3),
        plot(PlotWidth(r, t0, t1)),
        scale(span_ms > 0 ? plot / span_ms : 0),
        rows(static_cast<double>(r.queue_names.size())),
        width(kLeft + plot + kRight),
        height(kTop + rows * kRow + 44) {}

  static double PlotWidth(const SimResult& r, double t0, double t1) {
    double shortest = 0;
    for (const SimInstance& s : r.instances) {
      if (s.end_s <= t0 || s.start_s >= t1 || s.end_s <= s.start_s) continue;
      if (shortest == 0 || s.end_s - s.start_s < shortest) shortest = s.end_s - s.start_s;
    }
    if (shortest <= 0 || t1 <= t0) return 1000;
    return std::clamp(3.0 * (t1 - t0) / shortest, 1000.0, 6000.0);
  }
  bool Shows(const SimInstance& s) const { return s.end_s > t0 && s.start_s < t1; }
  double X(double seconds) const { return kLeft + (seconds - t0) * 1e3 * scale; }

  double t0, t1;  // the window, seconds
  double span_ms;
  double plot;
  double scale;  // px per ms
  double rows;
  double width;
  double height;
};

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
const char* const kStageColors[] = {"#222222", "#888888", "#d62728", "#1f77b4",
                                    "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};
constexpr int kStageColorsSize = sizeof(kStageColors) / sizeof(kStageColors[0]);

uint32_t StageOf(const SimResult& r, const SimInstance& s) {
  return s.node < r.node_stage.size() ? r.node_stage[s.node] : 0;
}

std::string GanttTitle(const SimResult& r, const GanttLayout& g) {
  using L = GanttLayout;
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Format("%.0f", g.width) +
         "\" height=\"" + Format("%.0f", g.height) + "\" viewBox=\"0 0 " + Format("%.0f", g.width) +
         " " + Format("%.0f", g.height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + Format("%.0f", L::kLeft) + "\" y=\"20\" font-size=\"13\">baton sim: " +
         Format("%.2f", r.throughput_per_s) + " inferences/s; steady state of " +
         std::to_string(r.inferences) + " inferences, " + Format("%.3f", g.t0 * 1e3) + "-" +
         Format("%.3f", g.t1 * 1e3) + " ms (box colour = inference, bar under it = stage)</text>\n";
  return out;
}

// The colour of each inference in the window (the palette repeats), and the
// colour of each stage's bar.
std::string GanttLegend(const SimResult& r, const GanttLayout& g) {
  using L = GanttLayout;
  std::set<uint32_t> shown;
  uint32_t stages = 1;
  for (const SimInstance& s : r.instances) {
    if (g.Shows(s)) shown.insert(s.inference);
  }
  for (uint32_t st : r.node_stage) stages = std::max(stages, st + 1);
  std::string out;
  double x = L::kLeft;
  for (uint32_t i : shown) {
    if (x > L::kLeft + g.plot / 2) break;
    out += "<rect x=\"" + Format("%.0f", x) + "\" y=\"30\" width=\"12\" height=\"12\" fill=\"" +
           kPalette[i % kPaletteSize] + "\"/><text x=\"" + Format("%.0f", x + 15) +
           "\" y=\"40\">#" + std::to_string(i) + "</text>\n";
    x += 48;
  }
  for (uint32_t st = 0; st < stages && st < static_cast<uint32_t>(kStageColorsSize); ++st) {
    const double sx = L::kLeft + g.plot - (stages - st) * 64.0;
    out += "<rect x=\"" + Format("%.0f", sx) + "\" y=\"36\" width=\"14\" height=\"4\" fill=\"" +
           kStageColors[st] + "\"/><text x=\"" + Format("%.0f", sx + 17) + "\" y=\"40\">stage " +
           std::to_string(st) + "</text>\n";
  }
  return out;
}

// Grid lines and labels in ms over the window.
std::string GanttAxis(const GanttLayout& g) {
  using L = GanttLayout;
  const double step = NiceStep(g.span_ms, 10);
  const double axis_y = L::kTop + g.rows * L::kRow;
  const double first = step > 0 ? std::ceil(g.t0 * 1e3 / step) * step : 0;
  std::string out = "<g class=\"axis\" stroke=\"#ddd\">\n";
  for (int k = 0; g.span_ms > 0 && first + k * step <= g.t1 * 1e3 * (1 + 1e-9); ++k) {
    const double x = g.X((first + k * step) / 1e3);
    out += "<line x1=\"" + Format("%.2f", x) + "\" y1=\"" + Format("%.0f", L::kTop) + "\" x2=\"" +
           Format("%.2f", x) + "\" y2=\"" + Format("%.0f", axis_y + 4) + "\"/>\n";
    out += "<text x=\"" + Format("%.2f", x) + "\" y=\"" + Format("%.0f", axis_y + 18) +
           "\" stroke=\"none\" fill=\"#333\" text-anchor=\"middle\">" +
           Format("%g", first + k * step) + "</text>\n";
  }
  out += "<text x=\"" + Format("%.0f", L::kLeft + g.plot) + "\" y=\"" +
         Format("%.0f", axis_y + 34) +
         "\" stroke=\"none\" fill=\"#333\" text-anchor=\"end\">time (ms)</text>\n";
  return out + "</g>\n";
}

// One node instance in the row at `y`, clipped to the window, with its
// stage bar, labelled where the name fits.
std::string GanttBox(const SimResult& r, const GanttLayout& g, const SimInstance& s, double y) {
  using L = GanttLayout;
  const double x0 = g.X(std::max(s.start_s, g.t0));
  const double w = std::max(1.0, g.X(std::min(s.end_s, g.t1)) - x0);
  const double by = y + (L::kRow - L::kBox) / 2 - 2;
  const std::string& name = r.node_names[s.node];
  const uint32_t stage = StageOf(r, s);
  std::string out = "<rect x=\"" + Format("%.2f", x0) + "\" y=\"" + Format("%.1f", by) +
                    "\" width=\"" + Format("%.2f", w) + "\" height=\"" + Format("%.0f", L::kBox) +
                    "\" fill=\"" + kPalette[s.inference % kPaletteSize] +
                    "\" stroke=\"white\" stroke-width=\"0.5\"><title>" + XmlEscape(name) + " #" +
                    std::to_string(s.inference) + ", stage " + std::to_string(stage) + ": " +
                    Format("%.3f", s.start_s * 1e3) + "-" + Format("%.3f", s.end_s * 1e3) +
                    " ms</title></rect>\n";
  out += "<rect x=\"" + Format("%.2f", x0) + "\" y=\"" + Format("%.1f", by + L::kBox + 1) +
         "\" width=\"" + Format("%.2f", w) + "\" height=\"4\" fill=\"" +
         kStageColors[stage % kStageColorsSize] + "\"/>\n";
  // A label only where it fits (about 6 px per character).
  if (w > 6.0 * static_cast<double>(name.size()) + 4) {
    out += "<text x=\"" + Format("%.2f", x0 + w / 2) + "\" y=\"" +
           Format("%.1f", by + L::kBox / 2 + 4) + "\" text-anchor=\"middle\" fill=\"white\">" +
           XmlEscape(name) + "</text>\n";
  }
  return out;
}

std::string GanttRow(const SimResult& r, const GanttLayout& g, size_t q) {
  using L = GanttLayout;
  const double y = L::kTop + static_cast<double>(q) * L::kRow;
  std::string out = "<g class=\"row\" data-queue=\"" + XmlEscape(r.queue_names[q]) + "\">\n";
  out += "<rect x=\"" + Format("%.0f", L::kLeft) + "\" y=\"" + Format("%.0f", y) + "\" width=\"" +
         Format("%.0f", g.plot) + "\" height=\"" + Format("%.0f", L::kRow) + "\" fill=\"" +
         (q % 2 ? "#f7f7f7" : "#ffffff") + "\"/>\n";
  out += "<text x=\"" + Format("%.0f", L::kLeft - 8) + "\" y=\"" +
         Format("%.1f", y + L::kRow / 2 + 4) + "\" text-anchor=\"end\">" +
         XmlEscape(r.queue_names[q]) + "</text>\n";
  for (const SimInstance& s : r.instances) {
    if (s.queue == q && g.Shows(s)) out += GanttBox(r, g, s, y);
  }
  return out + "</g>\n";
}

}  // namespace

std::string SimJson(const SimResult& r) {
  ojson root;
  root["inferences"] = r.inferences;
  root["throughput_per_s"] = r.throughput_per_s;
  root["bound_throughput_per_s"] = r.bound_throughput_per_s;
  root["latency_s"] = {{"mean", r.latency_mean_s}, {"max", r.latency_max_s}};
  root["utilization"] = ojson::object();
  for (size_t q = 0; q < r.queue_names.size(); ++q)
    root["utilization"][r.queue_names[q]] = r.utilization[q];
  root["nodes"] = ojson::array();
  for (size_t n = 0; n < r.node_names.size(); ++n) {
    ojson node;
    node["id"] = n;
    node["queue"] = r.queue_names[r.node_queue[n]];
    node["duration_s"] = r.node_duration_s[n];
    root["nodes"].push_back(node);
  }
  return root.dump(2) + "\n";
}

std::string SimText(const SimResult& r) {
  std::string out;
  out += "simulated " + std::to_string(r.inferences) +
         (r.inferences == 1 ? " inference" : " inferences") + " on " +
         std::to_string(r.queue_names.size()) + " queues: makespan " +
         Format("%.3f", r.makespan_s * 1e3) + " ms\n";
  out += "  throughput  " + Format("%.2f", r.throughput_per_s) + " inferences/s (bound " +
         Format("%.2f", r.bound_throughput_per_s) + "/s";
  if (r.bound_throughput_per_s > 0) {
    out += ", " + Format("%.1f", 100 * r.throughput_per_s / r.bound_throughput_per_s) + "% of it";
  }
  out += ")\n";
  if (r.flushes > 0) {
    out += "  flushes     " + std::to_string(r.flushes) +
           " (the caller had to end the stream: the plan cannot pipeline with " +
           "this many inferences in flight)\n";
  }
  out += "  latency     mean " + Format("%.3f", r.latency_mean_s * 1e3) + " ms, max " +
         Format("%.3f", r.latency_max_s * 1e3) + " ms\n";
  out += "  utilization\n";
  const std::vector<std::string> queues = NameColumn(r.queue_names);
  for (size_t q = 0; q < queues.size(); ++q) {
    out += "    " + queues[q] + Format("%5.1f", 100 * r.utilization[q]) + "%  busy " +
           Format("%.3f", r.queue_busy_s[q] * 1e3) + " ms\n";
  }
  out += "  nodes (duration per inference)\n";
  const std::vector<std::string> nodes = NameColumn(r.node_names);
  for (size_t n = 0; n < nodes.size(); ++n) {
    out += "    " + nodes[n] + Format("%10.3f", r.node_duration_s[n] * 1e6) + " us  " +
           r.queue_names[r.node_queue[n]] + "  " + r.node_ops[n] + "\n";
  }
  return out;
}

std::string ChromeTrace(const SimResult& r) {
  ojson events = ojson::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", 0},
                    {"args", {{"name", "baton sim"}}}});
  for (size_t q = 0; q < r.queue_names.size(); ++q) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", q},
                      {"args", {{"name", r.queue_names[q]}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", q},
                      {"args", {{"sort_index", q}}}});
  }
  for (const SimInstance& s : r.instances) {
    ojson e;
    e["name"] = r.node_names[s.node];
    e["cat"] = r.node_ops[s.node];
    e["ph"] = "X";
    e["ts"] = s.start_s * 1e6;
    e["dur"] = (s.end_s - s.start_s) * 1e6;
    e["pid"] = 0;
    e["tid"] = s.queue;
    e["args"] = {{"inference", s.inference}, {"node", s.node}};
    events.push_back(e);
  }
  ojson root;
  root["traceEvents"] = events;
  root["displayTimeUnit"] = "ms";
  return root.dump() + "\n";
}

std::string GanttSvg(const SimResult& r) {
  const GanttLayout layout(r);
  std::string out = GanttTitle(r, layout);
  out += GanttLegend(r, layout);
  out += GanttAxis(layout);
  for (size_t q = 0; q < r.queue_names.size(); ++q) out += GanttRow(r, layout, q);
  out += "</svg>\n";
  return out;
}

}  // namespace baton::planner
