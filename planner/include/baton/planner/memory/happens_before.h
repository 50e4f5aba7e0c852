#pragma once
// Happens-before over the plan's execution model (DESIGN §4-5), computed the
// way the runtime decides readiness: from queue counters.
//
// The schedule is unrolled from iteration 0: for every node instance the
// analysis tracks, per queue, how far that queue's counter is known to have
// advanced when the instance starts. Knowledge flows along queue program
// order, along waits (only where the waited inference exists), and from the
// in-flight limit (inference i starts after inference i - D has finished
// everywhere). An instance that is skipped waits for nothing: at start-up
// (negative inference) and at the end of a stream (any inference past the
// last one submitted before a flush). A question about inference i is
// therefore answered with every later inference assumed skipped ("horizon"
// i): the answer must hold however short the stream is. Knowledge only grows
// with the inference number, so what holds for the first inferences the
// unrolling covers holds for every later one; queries check all of them.

#include <cstdint>
#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

class HappensBefore {
 public:
  // Needs order, programs, waits, node_stage, node_queue, in_flight.
  explicit HappensBefore(const Program& program);

  // For every inference i >= 0 with i + delta >= 0: when n starts inference
  // i, has m completed inference i + delta? O(1) after the first question
  // about the same (n, m's queue, delta, m's stage): answers are memoized,
  // so one HappensBefore must not be queried from several threads at once.
  bool Completed(int m, int delta, int n) const;
  // Would n's knowledge, with `others` as its waits instead of its own,
  // imply `candidate` for every inference the candidate applies to?
  bool ImpliedWithout(int n, const std::vector<WaitEdge>& others, WaitEdge candidate) const;

 private:
  using Vec = std::vector<int64_t>;
  static constexpr int64_t kNone = INT64_MIN / 4;
  // The smallest, over the inferences Completed checks, of n's knowledge of
  // queue qm minus the counter value before a stage-sm node of inference
  // i + delta (INT64_MAX when no inference is checked).
  int64_t Margin(int qm, int sm, int delta, int n) const;
  int64_t Target(int m, int64_t inference) const;
  // Knowledge of instance (n, iteration k) from its program predecessor, the
  // given waits and the in-flight limit.
  // Instances of inferences past `horizon` are taken as skipped.
  void Knowledge(int n, int64_t k, const std::vector<WaitEdge>& waits, int64_t horizon,
                 Vec* out) const;
  size_t Index(int64_t horizon, int n, int64_t k) const {
    return ((static_cast<size_t>(horizon) * static_cast<size_t>(iterations_) +
             static_cast<size_t>(k)) *
                p_.graph.nodes.size() +
            static_cast<size_t>(n)) *
           p_.queues.size();
  }
  // The knowledge vector (one entry per queue) of instance (n, k).
  const int64_t* At(int64_t horizon, int n, int64_t k) const { return c_.data() + Index(horizon, n, k); }

  const Program& p_;
  int64_t iterations_ = 0;
  std::vector<int> position_;      // per node
  std::vector<int64_t> length_;    // per queue
  std::vector<int64_t> last_key_;  // per queue
  std::vector<int64_t> c_;  // [horizon][iteration][node][queue], flat
  int max_stage_ = 0;
  static constexpr int32_t kUnsetMargin = INT32_MIN;
  mutable std::vector<int32_t> margin_;  // Completed's memo, kUnsetMargin until asked
};

}  // namespace baton::planner
