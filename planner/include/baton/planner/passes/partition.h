#pragma once
// Automatic partitioning (`baton plan --auto`): a device for every node,
// chosen from the target's cost model (or measured profiles), within the
// devices' op and dtype lists, the domains' capacities and the user's pins.
//
// The search works on a PartitionModel: per node, its seconds on every device
// that can run it; per tensor, its bytes, producer and consumers; the copies
// an assignment implies, routed and charged exactly as InsertCopies and the
// cost model would (latency + bytes / bandwidth, on the link's DMA queue or on
// the destination device's queue). Evaluate() gives every queue's load per
// inference (the pipeline bound is 1 / the largest), the latency of one
// inference by list scheduling, and each domain's peak of live bytes along
// the topological order. The search itself (SearchPartitions) is:
//   1. every single device (its nodes where it can run them, the rest on the
//      fallback): the baselines the result must beat;
//   2. chains: for every order of the devices and a ladder of period targets,
//      fill the devices in topological order up to the period;
//   3. a dynamic program over contiguous segments of the topological order
//      (Piper-style): each segment on one device, every device used at most
//      once, minimizing the largest segment load (copies at each cut
//      charged to the segment after it);
//   4. local search from the best few: move a run of up to four nodes
//      (consecutive in topological order) to another device while the
//      objective improves.
// Small graphs (at most SearchOptions::exact_limit assignments) are instead
// enumerated exhaustively on the model.
// Candidates go back to the planner, which plans, packs and simulates each:
// the simulator is the judge (planner.cc). Deterministic: no clocks decide,
// only evaluation budgets derived from the graph size.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

enum class Objective { kThroughput, kLatency };

struct PartitionEval {
  std::vector<double> queue_load_s;    // per queue (devices first, then DMA engines)
  double bottleneck_s = 0;             // largest queue load
  // The period a pipeline of at most max_depth inferences in flight can
  // reach: max(bottleneck, latency / max_depth) (set by the search).
  double period_s = 0;
  double total_s = 0;                  // sum of all loads
  double latency_s = 0;                // one inference, list-scheduled
  std::vector<uint64_t> domain_peak;   // per domain, live bytes at the peak
  bool fits = true;                    // every domain_peak within its limit
};

class PartitionModel {
 public:
  // `p` has its graph simplified and node_device assigned (pins recorded in
  // node_pinned). `node_seconds[n][d]` is node n's time on device d, or a
  // negative value when d cannot run n. `workspace_bytes[n]` is the scratch
  // node n needs on whichever device runs it.
  static Result<PartitionModel> Build(const Program& p,
                                      std::vector<std::vector<double>> node_seconds,
                                      std::vector<uint64_t> workspace_bytes);

  size_t num_nodes() const { return node_seconds_.size(); }
  size_t num_devices() const { return target_->devices.size(); }
  size_t num_queues() const { return queue_names_.size(); }
  const std::string& queue_name(size_t q) const { return queue_names_[q]; }
  bool CanRun(int node, int device) const { return node_seconds_[node][device] >= 0; }
  bool Pinned(int node) const { return pinned_[node]; }
  double Seconds(int node, int device) const { return node_seconds_[node][device]; }
  const std::vector<int>& topo() const { return topo_; }
  int TopoPos(int node) const { return topo_pos_[node]; }

  // Per position k of the topological order: the bytes and the number of
  // values produced before position k (graph inputs included) and read at
  // or after it (graph outputs count as read at the end): what a stage cut
  // before topo()[k] would copy. Size num_nodes() + 1.
  const std::vector<uint64_t>& CutBytes() const { return cut_bytes_; }
  const std::vector<int>& CutValues() const { return cut_values_; }

  // Seconds to move `values` values of `bytes` bytes in total from device
  // `from`'s first domain to device `to`'s (every hop of the route, each
  // value paying each link's latency); 0 when they share the domain.
  double CopySeconds(int from, int to, uint64_t bytes, int values) const;

  // Per domain: the live bytes an assignment may hold there (capacity times
  // `fraction`); Evaluate sets `fits` against these.
  void SetMemoryFraction(double fraction);

  PartitionEval Evaluate(const std::vector<int>& device) const;

  // The assignment that puts every node on `device` where it can run and
  // pin allows, and on the fallback device elsewhere.
  std::vector<int> SingleDevice(int device) const;

 private:
  struct Transfer {  // one non-constant tensor of the graph
    uint64_t bytes = 0;
    int producer = -1;            // node, or -1 for a graph input
    std::vector<int> consumers;   // nodes, topological order
    bool is_output = false;
  };
  struct Hop {
    int to_domain;
    int link;
  };
  void AddTransfers(const std::vector<int>& device, std::vector<double>* load,
                    std::vector<double>* ready_extra, std::vector<std::vector<int64_t>>* live) const;

  const Target* target_ = nullptr;
  std::vector<std::vector<double>> node_seconds_;
  std::vector<uint64_t> workspace_bytes_;
  std::vector<bool> pinned_;
  std::vector<int> pin_device_;  // a pinned node's device (AssignDevices'), else -1
  std::vector<int> topo_;
  std::vector<int> topo_pos_;
  std::vector<Transfer> transfers_;
  std::vector<std::vector<int>> node_inputs_;   // transfer indices read by each node
  std::vector<std::vector<int>> node_outputs_;  // transfer indices written by each node
  std::vector<std::string> queue_names_;
  std::vector<int> link_queue_;                 // per link: queue index, -1 = destination device
  std::vector<std::vector<std::vector<Hop>>> routes_;  // [from][to] fewest-hop route
  std::vector<uint64_t> domain_limit_;
  std::vector<uint64_t> cut_bytes_;
  std::vector<int> cut_values_;
  int fallback_domain_ = 0;
};

struct SearchOptions {
  Objective objective = Objective::kThroughput;
  int max_candidates = 6;  // distinct assignments returned, best first
  int max_in_flight = 4;   // the deepest pipeline the planner will try
  // Graphs with at most this many assignments (the product over free nodes
  // of the devices that can run them) are searched exhaustively instead of
  // by chains and local moves.
  int64_t exact_limit = 60000;
};

// Candidate assignments, best first by the model's objective, always
// including the best single-device assignment (the baseline `--auto` must not
// fall below). Only assignments that fit the memory limits are returned,
// unless none does (then the single-device baselines are).
std::vector<std::vector<int>> SearchPartitions(const PartitionModel& model,
                                               const SearchOptions& options);

// The lexicographic objective the search minimizes: fitting memories first;
// then for throughput the reachable period, the bottleneck, the latency; for
// latency the latency, then the period; the total load last.
bool Better(const PartitionEval& a, const PartitionEval& b, Objective objective);

}  // namespace baton::planner
