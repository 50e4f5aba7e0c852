#pragma once
// Internal to the plan validator (validate_plan.h), steps 3 and 4: the arena
// accesses of the unrolled instances, races between them and reads before
// writes. Like the rest of the validator it reads only the plan.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/validate_graph.h"

namespace baton::planner::validate_detail {

// One instance's access to the bytes [begin, end) of a domain.
struct Access {
  uint32_t instance;
  uint32_t tensor;
  uint32_t domain;
  uint64_t begin;
  uint64_t end;
  bool write;
  int64_t writer;  // reads: the instance that writes this tensor for the same inference
};

// Every arena access of the unrolled instances, grouped by instance; a tensor
// read (or written) twice by one instance counts once. Constants are
// read-only and left out.
std::vector<Access> CollectAccesses(const Unrolling& unrolling);

// Checks 3 and 4 of validate_plan.h over the accesses, on a closed graph
// (InstanceGraph::Close). The first failure in this order is returned: a read
// that no one writes, a race, a read whose writer does not happen before it, a
// write between a read and its writer; among races (and among overwrites) the
// one with the earliest inferences. `out_pairs` receives the overlapping pairs
// examined (left alone when a read has no writer).
Check CheckAccesses(const InstanceGraph& graph, const std::vector<Access>& accesses,
                    size_t* out_pairs);

}  // namespace baton::planner::validate_detail
