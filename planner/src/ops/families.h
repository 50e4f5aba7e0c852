#pragma once
// The op families: one file each under planner/src/ops/, each defining one
// OpFamily table. A new family is one line in BATON_OP_FAMILIES.

#include <cstddef>

#include "baton/planner/ops/op_def.h"

namespace baton::planner {

struct OpFamily {
  const OpDef* ops;
  size_t count;
};

#define BATON_OP_FAMILIES(X)                                                              \
  X(Conv) X(Pool) X(Gemm) X(Matmul) X(Elementwise) X(Activation) X(Softmax) X(Reduce)     \
  X(Batchnorm) X(ConcatSplit) X(Slice) X(Pad) X(Transpose) X(Gather) X(Copy) X(Shape) \
  X(Logic) X(ShapeMath) X(Tile) X(Norm) X(Resize) X(Einsum) X(Rnn) \
  X(Quant) X(Region)

#define BATON_DECLARE_OP_FAMILY(name) extern const OpFamily k##name##Ops;
BATON_OP_FAMILIES(BATON_DECLARE_OP_FAMILY)
#undef BATON_DECLARE_OP_FAMILY

class InferContext;
// The value of a Constant node from its value_* attribute (ops/shape.cc):
// records the output spec and fills `out_value`'s data.
Check InferConstantValue(InferContext& c, Tensor* out_value);

}  // namespace baton::planner
