#pragma once
// When two tensor instances may share bytes (DESIGN §5's reuse rule), for
// tensors with any number of slots. Host only; used by PlanMemory.
//
// A tensor t with S slots is accessed at inference i by its accessors (its
// writer, its readers, or the caller: kCallerWrite for a graph input,
// kCallerRead for a graph output) in slot i mod S. Instance t@i and instance
// u@j "never interleave" when every access of one happens-before every access
// of the other. With D inferences in flight, t@i and u@(i + delta) never
// interleave for |delta| >= D: inference i + D is admitted only after
// inference i was retrieved. So only delta in (-D, D) is ever examined.
//
// Slot s of t may share bytes with slot r of u exactly when every pair of
// instances that uses them never interleaves: for every i = s (mod S) and
// j = r (mod R). Those pairs have j - i = r - s (mod gcd(S, R)), and every such
// delta occurs. So the slots may share unless some delta in (-D, D) with
// delta = r - s (mod gcd(S, R)) interleaves:
//   - single-slot u (R = 1): every delta must be ordered;
//   - two tensors with S slots each, slot s on slot s (a "lane"): only the
//     deltas that are multiples of S must be ordered.
// Happens-before is HappensBefore's (program order, waits, the in-flight
// limit), and the caller's accesses are ordered by the async API: inputs of i
// are written before any node of i runs, outputs of i are read after all of
// i finished, and inference i + D is admitted only after i was retrieved.

#include <vector>

#include "baton/planner/memory/happens_before.h"

namespace baton::planner {

// Accessor ids besides node indices.
inline constexpr int kCallerWrite = -2;  // the application writes a graph input
inline constexpr int kCallerRead = -3;   // the application reads a graph output

class SharingRule {
 public:
  // `hb` must outlive the rule and describe the program's final waits.
  SharingRule(const HappensBefore& hb, int in_flight) : hb_(hb), in_flight_(in_flight) {}

  // Does access x at inference i happen-before access y at i + delta, for
  // every i where both exist?
  bool Before(int x, int y, int delta) const;
  // Every access in `a` at inference i happens-before every access in `b` at
  // inference i + delta.
  bool AllBefore(const std::vector<int>& a, const std::vector<int>& b, int delta) const;
  // t@i and u@(i + delta) never interleave, for every i (one direction for
  // all i: the conservative form).
  bool Ordered(const std::vector<int>& t, const std::vector<int>& u, int delta) const;

  // May two single-slot tensors share bytes? At every inference all accesses
  // of one come before all accesses of the other, and those before the
  // first's accesses at the next inference. (Single-slot tensors keep this
  // rule: it is the per-delta rule below with the order chained through
  // each tensor's own consecutive instances.)
  bool SingleSlotMayShare(const std::vector<int>& t, const std::vector<int>& u) const;
  // May any slot of t share bytes with any slot of u, wherever they are
  // placed? Every delta in (-D, D) must be ordered.
  bool AnySlotsMayShare(const std::vector<int>& t, const std::vector<int>& u) const;
  // May slot s of t share bytes with slot s of u, both with `slots` slots?
  // Only deltas that are multiples of `slots` must be ordered.
  bool LanesMayShare(const std::vector<int>& t, const std::vector<int>& u, int slots) const;
  // The general rule: may slot s of t (of t_slots) share bytes with slot r
  // of u (of u_slots)? The three above are its special cases.
  bool SlotsMayShare(const std::vector<int>& t, int t_slots, int s, const std::vector<int>& u,
                     int u_slots, int r) const;

 private:
  const HappensBefore& hb_;
  int in_flight_;
};

}  // namespace baton::planner
