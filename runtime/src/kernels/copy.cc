// Copy (Baton's __copy), Reshape, Flatten, Squeeze, Unsqueeze, Identity: the
// output holds the input's bytes, any dtype. Extra inputs (Reshape's shape,
// Squeeze/Unsqueeze axes) are ignored: the output tensor carries the shape.
// When the planner places output and input at the same address the kernel
// does nothing.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

Status CopyPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 2, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(x.dtype() == y.dtype(), "copy output dtype != input dtype");
  BATON_KCHECK(DTypeSize(x.dtype()) != 0, "copy of an unknown dtype");
  BATON_KCHECK(x.elements() == y.elements(), "copy output size != input size");
  return Status::Ok();
}

Status CopyEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  void* dst = call.outputs[0].data;
  if (dst != x.data) memmove(dst, x.data, ByteSize(x));
  return Status::Ok();
}

}  // namespace

// Every op of the family is the same byte copy.
constexpr KernelEntry CopyRow(Op op) {
  return {op, kAllDeviceKinds, CopyPrepare, CopyEval, nullptr};
}

constexpr KernelEntry kCopyEntries[] = {CopyRow(Op::Copy),      CopyRow(Op::Reshape),
                                        CopyRow(Op::Flatten),   CopyRow(Op::Squeeze),
                                        CopyRow(Op::Unsqueeze), CopyRow(Op::Identity)};
BATON_KERNEL_FAMILY(Copy, kCopyEntries);

}  // namespace kernels
}  // namespace baton
