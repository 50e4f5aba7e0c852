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
#ifndef BATON_MAX_INPUTS
#define BATON_MAX_INPUTS 64
#endif
#ifndef BATON_MAX_STAGE
#define BATON_MAX_STAGE 255
#endif
#ifndef BATON_MAX_LAG
#define BATON_MAX_LAG 255
#endif
#ifndef BATON_MAX_CUSTOM_KERNELS
#define BATON_MAX_CUSTOM_KERNELS 8
#endif
#ifndef BATON_MAX_QUEUE_NODES
#define BATON_MAX_QUEUE_NODES (1u << 20)
#endif
// 1: PlanView::Load checks the plan's CRC-32C trailer (docs/formats.md).
// 0: it skips the check, for images whose boot loader already verified the
// plan (or a signature over it), and for fuzzing. The trailer is still
// required; only its value goes unchecked. CMake: BATON_VERIFY_PLAN_CHECKSUM.
#ifndef BATON_VERIFY_PLAN_CHECKSUM
#define BATON_VERIFY_PLAN_CHECKSUM 1
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
// Graph inputs (Executor tracks them in a 64-bit mask).
inline constexpr uint32_t kMaxInputs = BATON_MAX_INPUTS;
// Largest Node.stage and Wait.lag.
inline constexpr uint32_t kMaxStage = BATON_MAX_STAGE;
inline constexpr uint32_t kMaxLag = BATON_MAX_LAG;
// Kernels registered by name (custom ops, foreign runtimes) in one
// KernelRegistry.
inline constexpr uint32_t kMaxCustomKernels = BATON_MAX_CUSTOM_KERNELS;
// Nodes in one queue's program.
inline constexpr uint32_t kMaxQueueNodes = BATON_MAX_QUEUE_NODES;

// Graph inputs of one plan: the executor keeps one bit per graph input of the
// next inference in a 64-bit mask (Executor::inputs_set_), so this is fixed.
inline constexpr uint32_t kMaxGraphInputs = 64;

static_assert(kMaxQueues >= 1 && kMaxDomains >= 1 && kMaxInFlight >= 1, "capacities");
static_assert(kMaxInputs <= 64, "BATON_MAX_INPUTS: the executor's input mask has 64 bits");
// Counters cannot wrap. Each queue publishes a 32-bit count of node instances,
// compared modulo 2^32 (signed difference) with targets at most
// (in-flight + stage + lag + 2) iterations of a program away; these limits
// keep that window below 2^31 instances, for streams of any length. The
// inference numbers themselves are 64-bit.
static_assert((uint64_t{kMaxInFlight} + kMaxStage + kMaxLag + 2) * kMaxQueueNodes < (uint64_t{1} << 31),
              "BATON_MAX_IN_FLIGHT + BATON_MAX_STAGE + BATON_MAX_LAG too large for BATON_MAX_QUEUE_NODES");

}  // namespace baton
