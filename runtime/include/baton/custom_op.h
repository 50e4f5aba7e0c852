#pragma once
// The attributes of a Custom or Subgraph node (schema CustomParams), for the
// kernels an application registers with KernelRegistry::RegisterCustom.
//
//   Status MyOpPrepare(const KernelCall& call) {
//     CustomAttributes attrs;
//     BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
//     int64_t k = 0;
//     if (!attrs.Int("k", &k)) return BATON_ERROR(kInvalidArgument, "needs int attribute k");
//     ...
//   }
//
// The attributes travel as a FlatBuffer nested in CustomParams.attributes
// (root CustomAttributes, docs/formats.md). PlanView::Load does not look
// inside it, so plans without custom ops cost the runtime core nothing: Load
// here runs the FlatBuffers verifier over it (and checks the alignment of its
// 8-byte vectors), once, from a kernel's prepare. After a successful Load the
// getters are plain reads. No heap; library baton_custom.

#include <stddef.h>
#include <stdint.h>

#include "baton/config.h"
#include "baton/kernels.h"
#include "baton/status.h"

namespace baton {

class CustomAttributes {
 public:
  // A tensor attribute: dtype, shape and element bytes (8-byte aligned).
  struct TensorValue {
    DType dtype = DType::Float32;
    uint32_t rank = 0;
    int64_t dims[kMaxRank] = {};
    const uint8_t* data = nullptr;
    size_t bytes = 0;
  };

  // Verifies the attributes of `node`. InvalidArgument when the node carries
  // no CustomParams, or its attribute buffer is malformed (the message says
  // which check failed). A node without attributes gives an empty set.
  static Status Load(const schema::Node& node, CustomAttributes* out);

  // CustomParams.name: "domain::op", or the runtime of a Subgraph node.
  const char* op_name() const { return op_name_; }
  uint32_t size() const;
  const schema::Attribute* Get(uint32_t i) const;
  // The attribute called `name`; null when absent.
  const schema::Attribute* Find(const char* name) const;

  // Typed reads. Each returns false (and leaves `out` alone) when the
  // attribute is absent or of another kind.
  bool Int(const char* name, int64_t* out) const;    // kind Int
  bool Float(const char* name, float* out) const;    // kind Float
  // Kind String: the string (NUL-terminated); null otherwise.
  const char* String(const char* name) const;
  // Kind Ints / Floats: the number of values, of which the first
  // min(count, capacity) are copied to `out`; -1 when absent or of another
  // kind.
  int32_t Ints(const char* name, int64_t* out, uint32_t capacity) const;
  int32_t Floats(const char* name, float* out, uint32_t capacity) const;
  // Kind Tensor; the rank must be at most kMaxRank (checked by Load).
  bool Tensor(const char* name, TensorValue* out) const;

 private:
  const char* op_name_ = "";
  const schema::CustomAttributes* root_ = nullptr;
};

}  // namespace baton
