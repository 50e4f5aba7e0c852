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
// launch_s + max(macs / macs_per_s, bytes / bytes_per_s).
double DeviceSeconds(const Cost& cost, double macs, double bytes);

// Seconds of one execution of every node under `target`, indexed by node.
// Errors name the queue, node or domain that the target does not describe.
Result<std::vector<double>> NodeSeconds(const schema::Plan& plan, const Target& target);

}  // namespace baton::planner
