#pragma once
// An independent check of a finished plan's schedule and memory (DESIGN §4-5).
// Host only. It reads nothing but the plan bytes and shares no reasoning with
// the planner's scheduler or memory planner, so it can catch their mistakes.
//
// Model. N inferences are unrolled into node instances (n, i), plus two caller
// events per inference: W(i) writes the graph inputs of i, R(i) reads its
// graph outputs. Happens-before (hb) is the transitive closure of:
//   - queue program order: each queue's instances in (iteration i + stage,
//     position) order, across iterations; instances with i < 0 or i >= N are
//     skipped and do not exist;
//   - waits: (m, i - L) -> (n, i) for every wait (m, L) of n with i - L >= 0;
//   - the caller: W(i) -> every (n, i) -> R(i); W(i) -> W(i+1);
//     R(i) -> R(i+1) (outputs come back in order);
//   - the in-flight limit D: R(i - D) -> W(i) (inference i is admitted only
//     after i - D was retrieved, which needs all its nodes done).
// Accesses: (n, i) reads its arena inputs and writes its outputs and
// workspace; W(i) writes the graph inputs, R(i) reads the graph outputs. An
// access covers [offset + (i mod slots) * slot_stride, + bytes) of the
// tensor's domain. Constants are read-only and never checked.
//
// Checks, reported in this order (the first failure is returned):
//   1. structure: indices in range, queue programs consistent with node.queue
//      and node.position, each tensor written by at most one node (or the
//      caller), every tensor a node touches in a domain its queue reaches and
//      inside its domain's arena;
//   2. deadlock: waits and queue order form no cycle (the message lists one).
//      A cycle that needs the in-flight limit too is no deadlock: the caller
//      cannot submit inference j before j - D is back, which needs j, so the
//      executor flushes the stream (docs/execution.md, "Streams") and the
//      next stream starts once the previous one was retrieved. The
//      validator then checks one stream of the length L the executor reaches
//      (the largest L whose inferences can all be admitted) and reports it:
//      stream_length < inferences, flushes = true. Such a plan does not
//      pipeline (typically D = 1 with a queue spanning two or more stages);
//   3. races: every two accesses by different instances to overlapping bytes
//      of one domain, at least one a write, are ordered by hb;
//   4. read-before-write: for every read of tensor t by instance x for
//      inference i, the writer of t for i (its producer node, or W(i) for a
//      graph input) happens-before x, and no other write to overlapping bytes
//      happens between them (hb(writer, w) and hb(w, x)); an arena tensor that
//      is read but written by no one fails here too.
// Messages name the nodes, inference numbers, tensors and byte ranges.
//
// Cost: O(V^2 / 8) bytes of reachability bitsets for V = N * (nodes + 2)
// instances; V above kMaxValidateInstances is refused. Cross-stream accesses
// need no check: a new stream starts only after the previous one was
// retrieved.

#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/planner/result.h"

namespace baton::planner {

inline constexpr size_t kMaxValidateInstances = 20000;

struct ValidateReport {
  uint32_t inferences = 0;     // N requested (or automatic)
  uint32_t stream_length = 0;  // inferences unrolled: N, or L < N when streams flush
  bool flushes = false;        // the in-flight limit forces the executor to flush
  size_t instances = 0;        // node instances plus caller events, per stream
  size_t edges = 0;            // direct happens-before edges
  size_t accesses = 0;         // arena byte-range accesses
  size_t pairs_checked = 0;    // overlapping access pairs examined
};

// `inferences` = N to unroll; 0 = automatic: D + max stage + P + 2, where P
// is the largest lcm(slots of t, slots of u) over tensors t, u whose slot
// ranges overlap in bytes (at least the largest slot count): enough for every
// slot of every tensor to be reused at least once in the steady state, and
// for every pairing of slot s of t with slot r of u that shares bytes to
// occur there. `out` (optional) receives the statistics, also on failure
// when the failure was found after unrolling.
Check ValidatePlanSchedule(const void* data, size_t size, int inferences = 0,
                           ValidateReport* out = nullptr);

}  // namespace baton::planner
