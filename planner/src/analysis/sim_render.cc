// The renderers of a simulation result (sim.h): JSON, text, Chrome trace and
// an SVG Gantt chart. The simulation itself is in sim.cc.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
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

// The chart's layout in SVG user units (px): a label column, the plot, and
// one row per queue below the title.
struct GanttLayout {
  static constexpr double kLeft = 100, kPlot = 900, kRight = 30, kTop = 40, kRow = 32, kBox = 24;

  explicit GanttLayout(const SimResult& r)
      : span_ms(r.makespan_s * 1e3),
        scale(span_ms > 0 ? kPlot / span_ms : 0),
        rows(static_cast<double>(r.queue_names.size())),
        width(kLeft + kPlot + kRight),
        height(kTop + rows * kRow + 40) {}

  double X(double seconds) const { return kLeft + seconds * 1e3 * scale; }

  double span_ms;
  double scale;  // px per ms
  double rows;
  double width;
  double height;
};

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

std::string GanttTitle(const SimResult& r, const GanttLayout& g) {
  using L = GanttLayout;
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Format("%.0f", g.width) +
         "\" height=\"" + Format("%.0f", g.height) + "\" viewBox=\"0 0 " + Format("%.0f", g.width) +
         " " + Format("%.0f", g.height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + Format("%.0f", L::kLeft) +
         "\" y=\"20\" font-size=\"13\">baton sim: " + std::to_string(r.inferences) +
         " inferences, " + Format("%.3f", g.span_ms) + " ms, " +
         Format("%.2f", r.throughput_per_s) + " inferences/s (colour = inference)</text>\n";
  return out;
}

// The colour of each inference (the palette repeats).
std::string GanttLegend(const SimResult& r) {
  using L = GanttLayout;
  std::string out;
  const uint32_t legend = std::min<uint32_t>(r.inferences, kPaletteSize);
  for (uint32_t i = 0; i < legend; ++i) {
    const double x = L::kLeft + L::kPlot - (legend - i) * 34.0;
    out += "<rect x=\"" + Format("%.0f", x) + "\" y=\"10\" width=\"12\" height=\"12\" fill=\"" +
           kPalette[i] + "\"/><text x=\"" + Format("%.0f", x + 15) + "\" y=\"20\">#" +
           std::to_string(i) + "</text>\n";
  }
  return out;
}

// Grid lines and labels in ms.
std::string GanttAxis(const GanttLayout& g) {
  using L = GanttLayout;
  const double step = NiceStep(g.span_ms, 10);
  const double axis_y = L::kTop + g.rows * L::kRow;
  std::string out = "<g class=\"axis\" stroke=\"#ddd\">\n";
  for (int k = 0; g.span_ms > 0 && k * step <= g.span_ms * (1 + 1e-9); ++k) {
    const double x = L::kLeft + k * step * g.scale;
    out += "<line x1=\"" + Format("%.2f", x) + "\" y1=\"" + Format("%.0f", L::kTop) + "\" x2=\"" +
           Format("%.2f", x) + "\" y2=\"" + Format("%.0f", axis_y + 4) + "\"/>\n";
    out += "<text x=\"" + Format("%.2f", x) + "\" y=\"" + Format("%.0f", axis_y + 18) +
           "\" stroke=\"none\" fill=\"#333\" text-anchor=\"middle\">" + Format("%g", k * step) +
           "</text>\n";
  }
  out += "<text x=\"" + Format("%.0f", L::kLeft + L::kPlot) + "\" y=\"" +
         Format("%.0f", axis_y + 34) +
         "\" stroke=\"none\" fill=\"#333\" text-anchor=\"end\">time (ms)</text>\n";
  return out + "</g>\n";
}

// One node instance in the row at `y`, labelled where the name fits.
std::string GanttBox(const SimResult& r, const GanttLayout& g, const SimInstance& s, double y) {
  using L = GanttLayout;
  const double x0 = g.X(s.start_s);
  const double w = std::max(0.5, g.X(s.end_s) - x0);
  const std::string& name = r.node_names[s.node];
  std::string out = "<rect x=\"" + Format("%.2f", x0) + "\" y=\"" +
                    Format("%.1f", y + (L::kRow - L::kBox) / 2) + "\" width=\"" +
                    Format("%.2f", w) + "\" height=\"" + Format("%.0f", L::kBox) + "\" fill=\"" +
                    kPalette[s.inference % kPaletteSize] +
                    "\" stroke=\"white\" stroke-width=\"0.5\"><title>" + XmlEscape(name) + " #" +
                    std::to_string(s.inference) + ": " + Format("%.3f", s.start_s * 1e3) + "-" +
                    Format("%.3f", s.end_s * 1e3) + " ms</title></rect>\n";
  // A label only where it fits (about 6 px per character).
  if (w > 6.0 * static_cast<double>(name.size()) + 4) {
    out += "<text x=\"" + Format("%.2f", x0 + w / 2) + "\" y=\"" +
           Format("%.1f", y + L::kRow / 2 + 4) + "\" text-anchor=\"middle\" fill=\"white\">" +
           XmlEscape(name) + "</text>\n";
  }
  return out;
}

std::string GanttRow(const SimResult& r, const GanttLayout& g, size_t q) {
  using L = GanttLayout;
  const double y = L::kTop + static_cast<double>(q) * L::kRow;
  std::string out = "<g class=\"row\" data-queue=\"" + XmlEscape(r.queue_names[q]) + "\">\n";
  out += "<rect x=\"" + Format("%.0f", L::kLeft) + "\" y=\"" + Format("%.0f", y) + "\" width=\"" +
         Format("%.0f", L::kPlot) + "\" height=\"" + Format("%.0f", L::kRow) + "\" fill=\"" +
         (q % 2 ? "#f7f7f7" : "#ffffff") + "\"/>\n";
  out += "<text x=\"" + Format("%.0f", L::kLeft - 8) + "\" y=\"" +
         Format("%.1f", y + L::kRow / 2 + 4) + "\" text-anchor=\"end\">" +
         XmlEscape(r.queue_names[q]) + "</text>\n";
  for (const SimInstance& s : r.instances) {
    if (s.queue == q) out += GanttBox(r, g, s, y);
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
  out += GanttLegend(r);
  out += GanttAxis(layout);
  for (size_t q = 0; q < r.queue_names.size(); ++q) out += GanttRow(r, layout, q);
  out += "</svg>\n";
  return out;
}

}  // namespace baton::planner
