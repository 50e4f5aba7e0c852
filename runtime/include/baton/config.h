#pragma once
// Fixed capacities of the runtime. Everything else is sized by the plan and
// lives in caller-provided memory. Raise these at build time with
// -DBATON_MAX_QUEUES=... etc.; the loader rejects plans that exceed them.

#include <stddef.h>
#include <stdint.h>

#ifndef BATON_MAX_QUEUES
#define BATON_MAX_QUEUES 16
#endif
#ifndef BATON_MAX_DOMAINS
#define BATON_MAX_DOMAINS 8
#endif
#ifndef BATON_MAX_IN_FLIGHT
#define BATON_MAX_IN_FLIGHT 16
#endif
#ifndef BATON_MAX_NODE_TENSORS
#define BATON_MAX_NODE_TENSORS 96
#endif
#ifndef BATON_MAX_RANK
#define BATON_MAX_RANK 8
#endif

namespace baton {

// Queues (devices plus DMA engines) one executor drives.
inline constexpr uint32_t kMaxQueues = BATON_MAX_QUEUES;
// Memory domains, i.e. caller-provided arenas.
inline constexpr uint32_t kMaxDomains = BATON_MAX_DOMAINS;
// Inferences in flight (Plan.inferences_in_flight).
inline constexpr uint32_t kMaxInFlight = BATON_MAX_IN_FLIGHT;
// Inputs + outputs + workspace tensors of one node (Concat can be wide).
inline constexpr uint32_t kMaxNodeTensors = BATON_MAX_NODE_TENSORS;
// Tensor rank.
inline constexpr uint32_t kMaxRank = BATON_MAX_RANK;

// Graph inputs of one plan: the executor keeps one bit per graph input of the
// next inference in a 64-bit mask (Executor::inputs_set_), so this is fixed.
inline constexpr uint32_t kMaxGraphInputs = 64;

static_assert(kMaxQueues >= 1 && kMaxDomains >= 1 && kMaxInFlight >= 1, "capacities");

}  // namespace baton
