#pragma once
// Loading and verifying a plan.
//
// Checks at load (once; execution afterwards trusts the plan):
//   0. the CRC-32C trailer over every other byte (baton/checksum.h; skipped,
//      trailer still required, when built with BATON_VERIFY_PLAN_CHECKSUM=0);
//   1. FlatBuffers verifier with explicit limits and the "BTN1" identifier;
//   2. format version == kPlanFormatVersion;
//   3. semantic checks: every index (domain, queue, tensor, node, wait) in
//      range, every arena tensor's slots inside its domain and aligned, every
//      constant inside the constant section, queue programs consistent with
//      node.queue/position, every tensor a node touches reachable from its
//      queue's domains, every limit of config.h respected (the message names
//      it), slots <= inferences_in_flight, [long] vectors 8-byte aligned, no
//      output or workspace of a node overlapping another tensor of that node
//      (no kernel runs in place), and the waits deadlock-free (see
//      docs/formats.md, "Deadlock freedom").
// Kernel lookup happens in Executor::Init. What Load cannot know (a constant
// or an offset changed to another valid value) only the checksum or a
// signature catches: docs/execution.md, "Trust model".
//
// The plan bytes are not copied: they must stay valid and unchanged while the
// PlanView is used, and start at a 16-byte aligned address (constants are
// read in place). `size` is the exact size of the plan file, trailer included.

#include <stddef.h>
#include <stdint.h>

#include "baton/checksum.h"
#include "baton/config.h"
#include "baton/plan_generated.h"
#include "baton/status.h"

namespace baton {

inline constexpr uint32_t kPlanFormatVersion = 1;
inline constexpr size_t kPlanAlignment = 16;

// Limits for the FlatBuffers verifier.
struct LoadLimits {
  uint32_t max_depth = 16;
  uint32_t max_tables = 1u << 20;
};

// A human-readable description of the first problem found, naming the
// element (e.g. "tensor 12: slot 1 exceeds domain 'dram' (81920 bytes)").
// Fixed size, filled without heap or printf.
struct LoadError {
  char text[160] = {0};
};

class PlanView {
 public:
  PlanView() = default;

  // Verifies `size` bytes at `data`. On failure returns a non-Ok status and,
  // when `out_error` is non-null, a description.
  static Status Load(const void* data, size_t size, PlanView* out_view,
                     LoadError* out_error = nullptr, const LoadLimits& limits = LoadLimits());

  const schema::Plan* plan() const { return plan_; }
  bool loaded() const { return plan_ != nullptr; }
  // The plan's CRC-32C trailer (verified unless BATON_VERIFY_PLAN_CHECKSUM=0).
  uint32_t checksum() const { return checksum_; }

  // Counts, and elements by index (i < the count). Defined in plan_view.cc:
  // one copy serves the loader and the executor (Cortex-M code size).
  uint32_t num_domains() const;
  uint32_t num_queues() const;
  uint32_t num_tensors() const;
  uint32_t num_nodes() const;
  uint32_t num_inputs() const;
  uint32_t num_outputs() const;
  uint32_t in_flight() const { return plan_->inferences_in_flight(); }

  const schema::Domain* domain(uint32_t i) const;
  const schema::Queue* queue(uint32_t i) const;
  const schema::Tensor* tensor(uint32_t i) const;
  const schema::Node* node(uint32_t i) const;
  const schema::Tensor* input(uint32_t i) const { return tensor(plan_->inputs()->Get(i)); }
  const schema::Tensor* output(uint32_t i) const { return tensor(plan_->outputs()->Get(i)); }
  // Start of the constant section (null when the plan has no constants).
  const uint8_t* constants() const {
    return plan_->constants() ? plan_->constants()->data() : nullptr;
  }

 private:
  template <typename V>
  static uint32_t Size(const V* v) {
    return v ? v->size() : 0;
  }
  const schema::Plan* plan_ = nullptr;
  uint32_t checksum_ = 0;
};

}  // namespace baton
