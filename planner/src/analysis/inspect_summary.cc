// `baton inspect`'s view of the plan's summary (inspect_internal.h): what the
// planner predicted (throughput, latency, per-queue load, bottleneck), how it
// compares with the best single device, which nodes were pinned or fell back
// and why, and where each node's cost came from.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/inspect_internal.h"
#include "baton/planner/analysis/summary.h"

namespace baton::planner::inspect_detail {
namespace {

using ojson = nlohmann::ordered_json;

const char* CauseName(schema::FallbackCause cause) {
  switch (cause) {
    case schema::FallbackCause::Dtype: return "dtype";
    case schema::FallbackCause::Capacity: return "capacity";
    case schema::FallbackCause::Op: break;
  }
  return "op";
}

const char* SourceName(schema::NodeCostSource source) {
  switch (source) {
    case schema::NodeCostSource::Profile: return "profile";
    case schema::NodeCostSource::Link: return "link";
    case schema::NodeCostSource::Target: break;
  }
  return "target";
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// Counts of node_cost by source: target, profile, link.
void CountSources(const schema::PlanSummary& s, int out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (s.node_cost() == nullptr) return;
  for (auto c : *s.node_cost()) {
    const auto i = static_cast<size_t>(c);
    if (i < 3) ++out[i];
  }
}

}  // namespace

std::string SummaryJsonText(const PlanView& view, const void* data, size_t size) {
  Result<const schema::PlanSummary*> read = ReadPlanSummary(data, size, *view.plan());
  if (!read.ok()) return ojson{{"error", read.error()}}.dump();
  const schema::PlanSummary* s = read.value();
  if (s == nullptr) return "null";
  ojson o;
  o["method"] = Str(s->method());
  o["objective"] = s->objective() ? ojson(s->objective()->str()) : ojson(nullptr);
  o["simulated_inferences"] = s->simulated_inferences();
  o["inferences_in_flight"] = view.in_flight();
  o["throughput_per_s"] = s->throughput_per_s();
  o["latency_s"] = s->latency_s();
  o["bound_throughput_per_s"] = s->bound_throughput_per_s();
  o["bottleneck_queue"] =
      s->bottleneck_queue() >= 0 ? ojson(QueueName(view, static_cast<uint32_t>(s->bottleneck_queue())))
                                 : ojson(nullptr);
  ojson queues = ojson::array();
  if (s->queues() != nullptr) {
    for (const schema::QueueLoad* q : *s->queues()) {
      queues.push_back({{"queue", QueueName(view, q->queue())},
                        {"busy_s_per_inference", q->busy_s()},
                        {"utilization", q->utilization()}});
    }
  }
  o["queues"] = queues;
  if (s->best_single_device() != nullptr) {
    const double best = s->best_single_throughput_per_s();
    o["best_single"] = {{"device", s->best_single_device()->str()},
                        {"throughput_per_s", best},
                        {"latency_s", s->best_single_latency_s()},
                        {"inferences_in_flight", s->best_single_in_flight()},
                        {"speedup", best > 0 ? s->throughput_per_s() / best : 0.0}};
  } else {
    o["best_single"] = nullptr;
  }
  ojson pinned = ojson::array();
  if (s->pinned() != nullptr) {
    for (uint32_t n : *s->pinned()) pinned.push_back(n);
  }
  o["pinned"] = pinned;
  ojson fallbacks = ojson::array();
  if (s->fallbacks() != nullptr) {
    for (const schema::FallbackNode* f : *s->fallbacks()) {
      fallbacks.push_back({{"node", f->node()},
                           {"name", NodeName(view, f->node())},
                           {"requested", Str(f->requested())},
                           {"placed", QueueName(view, view.node(f->node())->queue())},
                           {"cause", CauseName(f->cause())},
                           {"reason", Str(f->reason())}});
    }
  }
  o["fallbacks"] = fallbacks;
  int counts[3];
  CountSources(*s, counts);
  o["cost_sources"] = {{"target", counts[0]}, {"profile", counts[1]}, {"link", counts[2]}};
  ojson node_cost = ojson::array();
  if (s->node_cost() != nullptr) {
    for (auto c : *s->node_cost()) node_cost.push_back(SourceName(c));
  }
  o["node_cost"] = node_cost;
  return o.dump();
}

std::string SummaryText(const PlanView& view, const void* data, size_t size) {
  Result<const schema::PlanSummary*> read = ReadPlanSummary(data, size, *view.plan());
  std::ostringstream out;
  out << "Prediction (the planner's simulation of this plan on its target)\n";
  if (!read.ok()) return out.str() + "  " + read.error() + "\n";
  const schema::PlanSummary* s = read.value();
  if (s == nullptr) return out.str() + "  (none: the plan carries no summary)\n";
  out << "  placement: " << Str(s->method());
  if (s->objective() != nullptr) out << " (objective " << s->objective()->str() << ")";
  out << ", " << view.in_flight() << (view.in_flight() == 1 ? " inference" : " inferences")
      << " in flight (D)\n";
  out << "  throughput " << Fixed(s->throughput_per_s(), 1) << " inferences/s (bound "
      << Fixed(s->bound_throughput_per_s(), 1) << "/s), latency "
      << Fixed(s->latency_s() * 1e3, 3) << " ms";
  if (s->bottleneck_queue() >= 0) {
    out << ", bottleneck " << QueueName(view, static_cast<uint32_t>(s->bottleneck_queue()));
  }
  out << "\n";
  if (s->best_single_device() != nullptr) {
    const double best = s->best_single_throughput_per_s();
    out << "  best single device: " << s->best_single_device()->str() << " at " << Fixed(best, 1)
        << " inferences/s (D=" << s->best_single_in_flight() << ", latency "
        << Fixed(s->best_single_latency_s() * 1e3, 3) << " ms); speed-up "
        << Fixed(best > 0 ? s->throughput_per_s() / best : 0.0, 2) << "x\n";
  }
  if (s->queues() != nullptr) {
    for (const schema::QueueLoad* q : *s->queues()) {
      char line[160];
      std::snprintf(line, sizeof(line), "    %-10s load %9.3f ms per inference, utilization %5.1f%%%s\n",
                    QueueName(view, q->queue()).c_str(), q->busy_s() * 1e3,
                    q->utilization() * 100,
                    static_cast<int32_t>(q->queue()) == s->bottleneck_queue() ? "  (bottleneck)"
                                                                              : "");
      out << line;
    }
  }
  const uint32_t pinned = s->pinned() ? s->pinned()->size() : 0;
  out << "  pinned nodes (rules, annotations): " << pinned;
  for (uint32_t k = 0; k < pinned; ++k) {
    out << (k == 0 ? ": " : ", ") << NodeName(view, s->pinned()->Get(k));
  }
  out << "\n";
  const uint32_t fallbacks = s->fallbacks() ? s->fallbacks()->size() : 0;
  out << "  fallback nodes: " << fallbacks << "\n";
  for (uint32_t k = 0; k < fallbacks; ++k) {
    const schema::FallbackNode* f = s->fallbacks()->Get(k);
    out << "    " << NodeName(view, f->node()) << ": requested " << Str(f->requested())
        << ", placed on " << QueueName(view, view.node(f->node())->queue()) << " ("
        << CauseName(f->cause()) << ": " << Str(f->reason()) << ")\n";
  }
  int counts[3];
  CountSources(*s, counts);
  out << "  node costs from: target " << counts[0] << ", profile " << counts[1] << ", link "
      << counts[2] << "\n";
  return out.str();
}

}  // namespace baton::planner::inspect_detail
