#pragma once
// The planner's working state between passes: the graph (with __copy nodes
// once copies are inserted), the target, and every decision the passes make.
// Each pass fills one part and is a function over this structure:
//
//   AssignDevices -> InsertCopies -> AssignStages -> Schedule
//                 -> PlanWorkspace -> PlanMemory -> Emit*
//
// All containers are indexed by node, tensor or queue index; nothing is keyed
// by pointer, so every pass is deterministic.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/planner/graph.h"
#include "baton/planner/target.h"

namespace baton::planner {

inline constexpr const char* kCopyOp = "__copy";

struct QueueInfo {
  std::string name;
  schema::DeviceKind kind = schema::DeviceKind::Cpu;
  int device = -1;           // target device index; -1 for a DMA engine
  std::vector<int> domains;  // domains it can read and write
};

struct WaitEdge {
  int node = 0;
  int lag = 0;
  bool operator==(const WaitEdge& o) const { return node == o.node && lag == o.lag; }
  bool operator<(const WaitEdge& o) const { return node != o.node ? node < o.node : lag < o.lag; }
};

struct Fallback {
  std::string node;
  std::string op;
  std::string requested;
  std::string placed;
  std::string reason;
};

struct TensorPlacement {
  int domain = -1;     // -1 for constants
  uint64_t offset = 0;
  uint32_t slots = 1;
  uint64_t slot_stride = 0;
};

struct DomainReport {
  uint64_t arena_bytes = 0;
  uint64_t lower_bound_bytes = 0;
};

struct Program {
  Graph graph;
  Target target;
  int in_flight = 1;

  // AssignDevices
  std::vector<int> node_device;     // per node: target device (copies: -1)
  std::vector<Fallback> fallbacks;
  std::vector<std::string> warnings;  // shown in the report
  // InsertCopies
  std::vector<QueueInfo> queues;    // devices first (target order), then DMA engines
  std::vector<int> node_queue;      // per node
  std::vector<int> tensor_domain;   // per tensor, -1 for constants
  // AssignStages
  std::vector<int> node_stage;
  int num_stages = 1;
  // Schedule
  std::vector<int> order;                     // global node order (emit order)
  std::vector<std::vector<int>> programs;     // per queue, node indices in order
  std::vector<std::vector<WaitEdge>> waits;   // per node, cross-queue
  // PlanWorkspace: per node, workspace tensor indices
  std::vector<std::vector<int>> workspace;
  // PlanMemory
  std::vector<TensorPlacement> placement;     // per tensor
  std::vector<DomainReport> domain_report;    // per domain

  int QueueOfDevice(int device) const;  // devices' queues share their index
  int NumCopies() const;
};

}  // namespace baton::planner
