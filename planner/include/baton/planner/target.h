#pragma once
// Target descriptions (DESIGN §7): the SoC's devices, memory domains and
// copy links. Parsed from target JSON; every error names the file and field.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/profile.h"
#include "baton/planner/result.h"

namespace baton::planner {

struct Cost {
  double macs_per_s = 1e9;
  double bytes_per_s = 1e9;
  double launch_s = 0;
};

// A device's time for one op ("op_costs" in target JSON): `seconds` +
// `per_element_s` x the elements of the node's outputs. Replaces Cost's
// formula for the nodes of that op on that device.
struct OpCost {
  double seconds = 0;
  double per_element_s = 0;
};

// The least alignment a domain gets: the target's "alignment" is raised to it.
inline constexpr uint32_t kMinDomainAlignment = 8;

struct TargetDomain {
  std::string name;
  uint64_t bytes = 0;       // capacity
  uint32_t alignment = 16;  // power of two, at least kMinDomainAlignment
};

struct TargetDevice {
  std::string name;
  schema::DeviceKind kind = schema::DeviceKind::Cpu;
  bool all_ops = false;  // "ops": "*" (every op Baton knows)
  // ONNX op names and custom ops ("domain::name"). A custom op runs only on
  // devices that list it: "*" does not include custom ops. Baton's own
  // post-processing ops (IsPostprocessOp) are CPU kernels: "*" includes them on
  // a CPU device, and a device of another kind may not list them.
  std::vector<std::string> ops;
  bool all_dtypes = false;          // "dtypes": "*"
  std::vector<std::string> dtypes;  // default {"float32"}
  Cost cost;
  // "op_costs": per op name (as `baton inspect` prints it: "Conv",
  // "com.example::MyOp"), a cost that replaces `cost` for that op.
  std::map<std::string, OpCost> op_costs;
  std::vector<int> domains;         // indices into Target::domains
  // "runtime": the foreign runtime plugin that executes this device's nodes
  // ("armnn"), "" for a native device. The planner merges the nodes placed
  // on such a device into `__subgraph` regions (passes/regions.h); its
  // `ops` may name only ops a region can carry (RegionOpSerializable), and
  // "*" means all of those.
  std::string runtime;
  // "threads" (CPU devices only, 1..kMaxDeviceThreads): threads one node may
  // use (Queue.threads in the plan). The cost model divides the parallel
  // part of a node's time by ThreadsFor(op) (ParallelSpeedup).
  uint32_t threads = 1;
  // Whether the device runs `op` (for a runtime device: listed, or "*", and
  // serializable into a region).
  bool Runs(const std::string& op) const;
  // Threads a node of `op` runs on here: `threads` for the ops whose
  // kernels split a node (OpSplitsAcrossThreads: Conv, Gemm, MatMul), 1 for
  // every other op. Its workspace holds this many slices.
  uint32_t ThreadsFor(const std::string& op) const;
  bool Handles(const std::string& dtype) const;
  bool Reaches(int domain) const;
};

// The most "threads" a CPU device may declare.
inline constexpr uint32_t kMaxDeviceThreads = 64;

// The share of a CPU node's time that runs on several threads in the cost
// model (Amdahl): time(N) = time(1) * (kSerialFraction + (1 -
// kSerialFraction) / N). docs/formats.md gives the measurement behind it.
inline constexpr double kSerialFraction = 0.15;

// time(1) / time(N) for a device of `threads` threads (1 for threads <= 1).
double ParallelSpeedup(uint32_t threads);

struct TargetLink {
  int from = -1;  // domain indices
  int to = -1;
  double bytes_per_s = 1e9;
  double latency_s = 0;
  std::string queue;  // DMA engine name, "" = destination device's queue
};

struct Target {
  std::string name;
  int fallback = 0;  // device index
  std::vector<TargetDomain> domains;
  std::vector<TargetDevice> devices;
  std::vector<TargetLink> links;
  // Measured node times (`baton plan --profile`); null: the cost model
  // alone. Shared and immutable, so copying a Target stays cheap.
  std::shared_ptr<const Profile> profile;

  int FindDevice(const std::string& name) const;  // -1 if absent
  int FindDomain(const std::string& name) const;
  // The link from -> to, or nullptr.
  const TargetLink* FindLink(int from, int to) const;
};

Result<Target> ParseTarget(const std::string& json_text, const std::string& what);
Result<Target> LoadTarget(const std::string& path);

// The built-in single-CPU target used when `baton plan` gets no --target.
Target DefaultCpuTarget();

// The custom ops ("domain::name") some device of `target` lists, sorted.
std::vector<std::string> ListedCustomOps(const Target& target);

// `baton plan --custom-op NAME`: declares custom op `name` and lets the
// target's fallback device run it (appends it to that device's ops, once).
// An error when `name` is not "domain::name".
Check DeclareCustomOp(const std::string& name, Target* target);

const char* DeviceKindName(schema::DeviceKind kind);  // "cpu", "npu", ...

}  // namespace baton::planner
