#pragma once
// __copy insertion (DESIGN §3).
//
// Queues: one per target device (same index), then one per DMA engine that a
// link names (in order of first appearance).
// Homes: a tensor lives in the first domain of its producer's device; graph
// inputs arrive in the fallback device's first domain; constants live in the
// plan's read-only section, readable by every device.
// Copies: where a consumer's device cannot reach a tensor's home, one
// `__copy` per (tensor, destination domain) moves it to the consumer device's
// first domain, shared by every consumer there. With no direct link the copy
// is routed over the fewest hops (one copy per hop, each shared too); with no
// route at all the plan fails naming the domain pair. Graph outputs are
// delivered to the fallback device's first domain under their own name (the
// tensor left behind is renamed "<name>@<domain>").
// A copy runs on its link's DMA queue when the link names one, otherwise on
// the destination device's queue (which then also reaches the source domain).

#include "baton/planner/program.h"

namespace baton::planner {

// Needs node_device. Fills queues, node_queue, tensor_domain; appends copy
// nodes and tensors to the graph (node_device = -1 for copies).
Check InsertCopies(Program* program);

}  // namespace baton::planner
