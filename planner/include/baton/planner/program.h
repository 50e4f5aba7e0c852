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
  std::string cause = "op";  // "op", "dtype" or "capacity"
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

// What `baton plan --auto` decided and why (report.json "auto", DESIGN §7
// extension in docs/partitioning.md). Empty unless --auto ran.
struct AutoReport {
  bool ran = false;
  std::string objective;             // "throughput" or "latency"
  double throughput_per_s = 0;       // simulated, chosen plan
  double latency_s = 0;              // simulated mean latency, chosen plan
  double bound_throughput_per_s = 0; // 1 / largest queue load
  std::string bottleneck_queue;
  std::string best_single_device;    // best single-device plan that fits
  double best_single_throughput_per_s = 0;
  double best_single_latency_s = 0;
  int best_single_in_flight = 1;
  int candidates_planned = 0;        // candidate plans packed and simulated
  bool time_limit_hit = false;       // --auto-time-limit cut the search short
  double memory_fraction = 1;        // share of each domain the search targeted
  std::vector<std::string> queues;           // per queue of the chosen plan
  std::vector<double> queue_busy_s;          // per queue, per inference (simulated)
  std::vector<double> utilization;           // per queue, busy / makespan
  std::vector<std::string> pinned;   // nodes kept where rules or annotations put them
};

// What the finished plan is predicted to do, and where each node's cost came
// from (report.json "summary", the plan's PlanSummary table, `baton
// inspect`). Filled by PlanGraph for rule and --auto plans alike; empty
// (present false) while passes run, so candidates carry no summary.
struct PlanSummary {
  bool present = false;
  uint32_t simulated_inferences = 0;
  double throughput_per_s = 0;
  double latency_s = 0;
  double bound_throughput_per_s = 0;
  int bottleneck_queue = -1;                 // queue index
  std::vector<double> queue_busy_s;          // per queue, per inference
  std::vector<double> utilization;           // per queue
  std::vector<std::string> node_cost_source; // per node (graph index): target, profile, link
  std::vector<double> node_seconds;          // per node (graph index)
  int profile_entries = 0;         // entries of the --profile files
  int profile_entries_matched = 0; // entries that match some node of the plan
};

struct Program {
  Graph graph;
  Target target;
  int in_flight = 1;

  // AssignDevices
  std::vector<int> node_device;     // per node: target device (copies: -1)
  std::vector<bool> node_pinned;    // per node: placed by an annotation or --assign rule
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
  // PlanAuto
  AutoReport auto_report;
  // PlanGraph, last
  PlanSummary summary;

  int QueueOfDevice(int device) const;  // devices' queues share their index
  // Queue.threads of queue q: its CPU device's "threads", else 1.
  uint32_t QueueThreads(int q) const;
  // Threads node n runs on: its queue's QueueThreads when its op's kernels
  // split a node (TargetDevice::ThreadsFor), else 1. Its workspace tensor
  // holds this many slices (memory.cc).
  uint32_t NodeThreads(int n) const;
  int NumCopies() const;
};

}  // namespace baton::planner
