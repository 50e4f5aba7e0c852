#include "analysis/validate_deadlock.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace baton::planner::validate_detail {
namespace {

// After a failed Sort, every instance left has a predecessor that is also
// left: walk backwards until an instance repeats, then return that loop in
// data-flow order: cycle[k] -> cycle[k+1], and the last back to cycle[0], are
// edges.
std::vector<uint32_t> FindCycle(const InstanceGraph& graph, bool with_limit,
                                const std::vector<uint32_t>& left) {
  const uint32_t v_max = graph.unrolling().instances();
  std::vector<std::vector<Edge>> pred(v_max);
  for (uint32_t v = 0; v < v_max; ++v) {
    if (left[v] == 0) continue;
    for (const Edge& e : graph.successors(v)) {
      if (Counts(e, with_limit) && left[e.to] > 0) pred[e.to].push_back({v, e.kind});
    }
  }
  uint32_t start = 0;
  while (left[start] == 0) ++start;
  std::vector<int64_t> visited_at(v_max, -1);
  std::vector<uint32_t> walk;  // instances, walking backwards along edges
  uint32_t v = start;
  while (visited_at[v] < 0) {
    visited_at[v] = static_cast<int64_t>(walk.size());
    walk.push_back(v);
    v = pred[v].front().to;
  }
  std::vector<uint32_t> cycle(walk.begin() + visited_at[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

// "a -(kind)-> b -(kind)-> ... -> a".
std::string CycleText(const InstanceGraph& graph, bool with_limit,
                      const std::vector<uint32_t>& cycle) {
  const Unrolling& u = graph.unrolling();
  std::string path;
  for (size_t k = 0; k < cycle.size(); ++k) {
    const uint32_t next = cycle[(k + 1) % cycle.size()];
    EdgeKind kind = EdgeKind::kWait;
    for (const Edge& e : graph.successors(cycle[k])) {
      if (Counts(e, with_limit) && e.to == next) kind = e.kind;
    }
    path += u.InstanceName(cycle[k]) + " -(" + EdgeText(kind) + ")-> ";
  }
  return path + u.InstanceName(cycle[0]);
}

InstanceGraph Build(const PlanFacts& facts, uint32_t inferences, ValidateReport* report) {
  InstanceGraph graph(Unrolling(facts, inferences));
  if (report != nullptr) {
    report->instances = graph.unrolling().instances();
    report->edges = graph.edges();
  }
  return graph;
}

}  // namespace

Check CheckAcyclic(InstanceGraph* graph, bool with_limit) {
  std::vector<uint32_t> left;
  if (graph->Sort(with_limit, &left)) return Check();
  const std::string path = CycleText(*graph, with_limit, FindCycle(*graph, with_limit, left));
  if (!with_limit) return Fail("deadlock: the schedule has a cycle: " + path);
  return Fail("deadlock through the in-flight limit (D = " +
              std::to_string(graph->unrolling().facts().in_flight) +
              "): the stream cannot progress, so the executor would have to flush it and "
              "the plan would not pipeline; raise inferences_in_flight above the stages a "
              "queue spans, or reorder its program: " +
              path);
}

Result<InstanceGraph> ScheduleStream(const PlanFacts& facts, uint32_t requested,
                                     ValidateReport* report) {
  InstanceGraph graph = Build(facts, requested, report);
  BATON_TRY(CheckAcyclic(&graph, false));
  std::vector<uint32_t> left;
  if (graph.Sort(true, &left)) return Result<InstanceGraph>(std::move(graph));
  // The in-flight limit closes a cycle: the caller cannot submit some
  // inference j before j - D is back, which needs j. The executor then
  // flushes the stream after the inferences already submitted, and each
  // later stream repeats the pattern after the previous one was fully
  // retrieved (so streams never overlap). The stream length L is the
  // largest count for which the first L inferences can all be admitted.
  uint32_t length = 1;
  while (length + 1 < requested) {
    if (!Build(facts, length + 1, report).Sort(true, &left)) break;
    ++length;
  }
  InstanceGraph stream = Build(facts, length, report);
  BATON_TRY(CheckAcyclic(&stream, true));
  return Result<InstanceGraph>(std::move(stream));
}

}  // namespace baton::planner::validate_detail
