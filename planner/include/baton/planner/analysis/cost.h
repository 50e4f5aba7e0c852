#pragma once
// The cost model of DESIGN §7, applied to a plan. Host only.
//
//   node on device d:  launch_s + max(macs / macs_per_s, bytes / bytes_per_s)
//   __copy:            latency_s + bytes / bytes_per_s of the target link
//                      from its input's domain to its output's domain,
//                      whichever queue runs it
//
// Queues map to the target by name: a queue named like a device uses that
// device's cost (the kinds must agree); a DMA queue (kind dma) must be the
// `queue` of at least one link and runs only copies. Plan domains map to
// target domains by name. A copy whose input is a constant (no domain), or
// between domains with no link, costs like any node of its queue's device
// (on a DMA queue that is an error).
//
// All functions expect a plan that passed PlanView::Load.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/result.h"
#include "baton/planner/target.h"

namespace baton::planner {

// Multiply-accumulates of one execution of node `node`, from tensor shapes
// and params (each op's OpDef::macs, planner/src/ops/):
//   Conv:           output elements * (Cin / group) * kernel area
//                   (kernel from ConvParams, else the weight's spatial dims)
//   Gemm, MatMul:   output elements * K (M * N * K, times the batch)
//   __copy:         0
//   everything else (pools, elementwise, activations, data movement):
//                   one per output element
double NodeMacs(const schema::Plan& plan, uint32_t node);

// Bytes of all present inputs (constants included) and outputs of one
// execution of `node`; workspace is not counted.
double NodeBytes(const schema::Plan& plan, uint32_t node);

// DESIGN §7's node time on a device with cost `cost`:
// launch_s + max(macs / macs_per_s, bytes / bytes_per_s), the second term
// divided by ParallelSpeedup(threads) on a CPU device with "threads" > 1
// (target.h: Amdahl with kSerialFraction).
double DeviceSeconds(const Cost& cost, double macs, double bytes, uint32_t threads = 1);

// Where a node's time comes from: the target's formula above, a measured
// profile entry (target.profile, baton/planner/profile.h), or the link
// model (copies; never profiled).
enum class CostSource : uint8_t { kTarget, kProfile, kLink };
const char* CostSourceName(CostSource source);  // "target", "profile", "link"

// The profile key of node `node`: its op and the dtype and shape of each
// kernel input (absent ones included) and output (NodeSignatureText).
std::string NodeSignature(const schema::Plan& plan, uint32_t node);
// The operands NodeSignature is made of (an absent optional input has
// present == false).
void NodeOperandSignatures(const schema::Plan& plan, uint32_t node,
                           std::vector<OperandSignature>* out_inputs,
                           std::vector<OperandSignature>* out_outputs);

struct NodeCosts {
  std::vector<double> seconds;      // per plan node
  std::vector<CostSource> source;   // per plan node
};

// Seconds of one execution of every node under `target`, indexed by node:
// a non-copy node whose signature and queue kind match target.profile takes
// the measured median (Profile::Seconds), every other node the formulas
// above. Errors name the queue, node or domain that the target does not
// describe.
Result<NodeCosts> NodeCostsOf(const schema::Plan& plan, const Target& target);
Result<std::vector<double>> NodeSeconds(const schema::Plan& plan, const Target& target);

}  // namespace baton::planner
