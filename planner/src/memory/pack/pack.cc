// Pack(): validates the problem, splits it into independent components, packs
// each with the greedy portfolio and then improves the one that sets the
// height (exact search for components of up to kMaxExactBuffers buffers,
// hill climbing above that) until the lower bound, the capacity or the time
// limit is reached. See docs/packing.md.

#include "baton/planner/memory/pack.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "pack_internal.h"

namespace baton::planner {
namespace {

using pack_detail::Clock;
using pack_detail::Component;
using pack_detail::SearchOutcome;

// Limits that keep every sum and difference the packer forms within int64.
constexpr int64_t kMaxTotalBytes = int64_t{1} << 60;
constexpr int64_t kMaxTime = int64_t{1} << 61;
// Hill-climbing moves per component before the exact search takes over.
constexpr int64_t kHillClimbWarmup = 400;

std::string Name(const PackProblem& problem, int i) {
  const std::string& id = problem.buffers[i].id;
  return "buffer " + std::to_string(i) + (id.empty() ? "" : " ('" + id + "')");
}

Check ValidateProblem(const PackProblem& problem) {
  if (problem.alignment < 1) {
    return Fail("pack: alignment must be >= 1, got " + std::to_string(problem.alignment));
  }
  if (problem.capacity < 0) {
    return Fail("pack: capacity must be >= 0, got " + std::to_string(problem.capacity));
  }
  if (!(problem.time_limit_s >= 0) || !std::isfinite(problem.time_limit_s)) {
    return Fail("pack: time limit must be a finite number of seconds >= 0");
  }
  const int n = static_cast<int>(problem.buffers.size());
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const PackBuffer& b = problem.buffers[i];
    if (b.size <= 0) return Fail("pack: " + Name(problem, i) + ": size must be > 0");
    if (b.upper <= b.lower) {
      return Fail("pack: " + Name(problem, i) + ": upper must be greater than lower");
    }
    if (b.lower < -kMaxTime || b.upper > kMaxTime) {
      return Fail("pack: " + Name(problem, i) + ": lifetime must lie within +-2^61");
    }
    if (b.size > kMaxTotalBytes - total - problem.alignment) {
      return Fail("pack: total buffer size exceeds 2^60 bytes");
    }
    total += b.size + problem.alignment;
  }
  for (const auto& [a, b] : problem.extra_conflicts) {
    if (a < 0 || a >= n || b < 0 || b >= n || a == b) {
      return Fail("pack: extra conflict (" + std::to_string(a) + ", " + std::to_string(b) +
                  ") must name two different buffers in [0, " + std::to_string(n) + ")");
    }
  }
  return {};
}

// One component and the best packing known for it.
struct ComponentState {
  Component c;
  std::vector<int64_t> offsets;  // units
  int64_t height = 0;            // bytes
  int64_t lower_bound = 0;       // bytes; raised when a target is proven infeasible
  pack_detail::GreedyResult greedy;
};

bool Exact(const Component& c) { return c.has_adjacency && c.n <= pack_detail::kMaxExactBuffers; }

void Adopt(ComponentState& s, const std::vector<int64_t>& offsets) {
  const int64_t height = s.c.HeightBytes(offsets);
  if (height < s.height) {
    s.height = height;
    s.offsets = offsets;
  }
}

// Hill climbing from the greedy's ordering down to `floor_bytes`.
void Climb(ComponentState& s, int64_t floor_bytes, int64_t iterations, Clock::time_point deadline) {
  if (s.height <= floor_bytes) return;
  pack_detail::GreedyResult r =
      pack_detail::HillClimb(s.c, s.greedy, floor_bytes, iterations, deadline);
  if (r.height < s.height) {
    s.height = r.height;
    s.offsets = r.offsets;
  }
  s.greedy = std::move(r);
}

// Node budget of the first round of searches.
int64_t FirstBudget(const Component& c) { return 2 * int64_t{c.n} + 64; }

// MiniMalloc's three orderings carry the first rounds alone; the others join
// when the search proves hard (measured on the MiniMalloc set and on random
// tilings: docs/packing.md).
int HeuristicsInRound(int round) { return round < 5 ? 3 : pack_detail::kNumHeuristics; }

// Exact search for a packing within `target` bytes, trying the static
// orderings in turn with a node budget that doubles each round (restarts tame
// the search's heavy tail).
SearchOutcome Decide(ComponentState& s, int64_t target, Clock::time_point deadline) {
  const std::vector<int64_t> caps = s.c.UnitCaps(target);
  std::vector<int64_t> offsets;
  int64_t budget = FirstBudget(s.c);
  for (int round = 0;; ++round, budget *= 2) {
    for (int h = 0; h < HeuristicsInRound(round); ++h) {
      const SearchOutcome r = pack_detail::ExactSearch(s.c, caps, h, budget, deadline, &offsets);
      if (r == SearchOutcome::kFound) Adopt(s, offsets);
      if (r != SearchOutcome::kBudget) return r;
    }
  }
}

// Lowers the component's height towards max(lower bound, floor) with
// budgeted searches at three targets: the bound itself (aggressive), halfway,
// and a sixteenth of the gap below the best so far (conservative). The
// targets share the search fairly, by nodes spent. Each keeps its own node budget and cycles
// through the static orderings; when a whole cycle ends undecided, its
// budget doubles. So a hard bound gets ever longer searches while small gains
// keep coming at the conservative target.
void Minimize(ComponentState& s, int64_t floor_bytes, Clock::time_point deadline) {
  const bool exact = Exact(s.c);
  Climb(s, std::max(s.lower_bound, floor_bytes), exact ? kHillClimbWarmup : INT64_MAX, deadline);
  if (!exact) return;
  std::vector<int64_t> offsets;
  int64_t budget[3], spent[3] = {0, 0, 0};
  int heuristic[3] = {0, 0, 0}, round[3] = {0, 0, 0};
  for (int64_t& b : budget) b = FirstBudget(s.c);
  while (Clock::now() < deadline) {
    const int64_t low = std::max(s.lower_bound, floor_bytes);
    if (s.height <= low) return;
    // A sixteenth of the gap, so that the conservative target does not crawl
    // down one byte at a time.
    const int64_t gap = s.height - low;
    const int64_t targets[3] = {low, low + (gap - 1) / 2,
                                s.height - std::max<int64_t>(1, gap / 16)};
    int t = -1;
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && targets[k] == targets[k - 1]) continue;
      if (t < 0 || spent[k] < spent[t]) t = k;
    }
    pack_detail::SearchStats stats;
    const SearchOutcome r = pack_detail::ExactSearch(s.c, s.c.UnitCaps(targets[t]), heuristic[t],
                                                     budget[t], deadline, &offsets, &stats);
    spent[t] += stats.nodes;
    switch (r) {
      case SearchOutcome::kTimeout:
        return;
      case SearchOutcome::kFound:
        Adopt(s, offsets);
        break;
      case SearchOutcome::kInfeasible:
        s.lower_bound = targets[t] + 1;
        break;
      case SearchOutcome::kBudget:
        if (++heuristic[t] == HeuristicsInRound(round[t])) {
          heuristic[t] = 0;
          ++round[t];
          budget[t] *= 2;
        }
        break;
    }
  }
}

// The components of a validated problem, each with its greedy packing.
std::vector<ComponentState> StartComponents(const PackProblem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int64_t> lower(n), upper(n), bytes(n);
  for (int i = 0; i < n; ++i) {
    lower[i] = problem.buffers[i].lower;
    upper[i] = problem.buffers[i].upper;
    bytes[i] = problem.buffers[i].size;
  }
  std::vector<ComponentState> states;
  for (Component& c : pack_detail::BuildComponents(
           {&lower, &upper, &bytes, &problem.extra_conflicts, problem.alignment})) {
    ComponentState s;
    s.c = std::move(c);
    s.greedy = pack_detail::GreedyPortfolio(s.c);
    s.offsets = s.greedy.offsets;
    s.height = s.greedy.height;
    s.lower_bound = s.c.lower_bound_bytes;
    states.push_back(std::move(s));
  }
  return states;
}

// Brings one component within `capacity`, or says why it could not.
Check FitComponent(ComponentState& s, int64_t capacity, Clock::time_point deadline) {
  if (s.height <= capacity) return {};
  if (s.lower_bound > capacity) {
    return Fail("pack: no packing fits within " + std::to_string(capacity) +
                " bytes: " + std::to_string(s.lower_bound) + " bytes are live at one time");
  }
  // Hill climbing rarely meets a capacity the greedy missed; the exact
  // search does it faster where it applies.
  const bool exact = Exact(s.c);
  if (!exact) Climb(s, capacity, INT64_MAX, deadline);
  if (s.height <= capacity) return {};
  if (!exact) {
    return Fail("pack: no packing within " + std::to_string(capacity) +
                " bytes found in the time limit (best " + std::to_string(s.height) + " bytes; " +
                std::to_string(s.c.n) + " buffers conflict too much for the exact search)");
  }
  const SearchOutcome r = Decide(s, capacity, deadline);
  if (r == SearchOutcome::kInfeasible) {
    return Fail("pack: no packing fits within " + std::to_string(capacity) +
                " bytes (proven by exhaustive search)");
  }
  if (r != SearchOutcome::kFound) {
    return Fail("pack: no packing within " + std::to_string(capacity) +
                " bytes found in the time limit (best " + std::to_string(s.height) + " bytes)");
  }
  return {};
}

// Works on the component that sets the height, down to the next highest (or
// the lower bound); stops when it cannot go lower or time runs out.
void MinimizeHeight(std::vector<ComponentState>& states, Clock::time_point deadline) {
  int64_t bound = 0;
  for (const ComponentState& s : states) bound = std::max(bound, s.lower_bound);
  while (!states.empty() && Clock::now() < deadline) {
    size_t top = 0;
    int64_t second = 0;
    for (size_t k = 1; k < states.size(); ++k) {
      if (states[k].height > states[top].height) top = k;
    }
    // The next lower height among the others: ties must all come down.
    for (size_t k = 0; k < states.size(); ++k) {
      if (states[k].height < states[top].height) second = std::max(second, states[k].height);
    }
    ComponentState& s = states[top];
    const int64_t before = s.height;
    if (before <= std::max(bound, s.lower_bound)) break;
    Minimize(s, std::max(bound, second), deadline);
    bound = std::max(bound, s.lower_bound);
    if (s.height == before) break;
  }
}

// The components' packings, in bytes and in the problem's buffer order.
PackSolution Assemble(const PackProblem& problem, const std::vector<ComponentState>& states) {
  PackSolution solution;
  solution.offsets.assign(problem.buffers.size(), 0);
  int64_t proven = 0;
  for (const ComponentState& s : states) {
    for (int i = 0; i < s.c.n; ++i) solution.offsets[s.c.ids[i]] = s.offsets[i] * problem.alignment;
    solution.height = std::max(solution.height, s.height);
    solution.lower_bound = std::max(solution.lower_bound, s.c.lower_bound_bytes);
    proven = std::max(proven, s.lower_bound);
  }
  solution.optimal = solution.height <= std::max(proven, solution.lower_bound);
  return solution;
}

}  // namespace

Result<PackSolution> Pack(const PackProblem& problem) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::min(problem.time_limit_s, 1e7)));
  BATON_TRY(ValidateProblem(problem));
  std::vector<ComponentState> states = StartComponents(problem);
  if (problem.capacity > 0) {
    for (ComponentState& s : states) BATON_TRY(FitComponent(s, problem.capacity, deadline));
  } else {
    MinimizeHeight(states, deadline);
  }
  PackSolution solution = Assemble(problem, states);
  solution.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return solution;
}

}  // namespace baton::planner
