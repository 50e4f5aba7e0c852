// Concat and Split along AxisParams.axis (non-negative), any dtype. Split
// sizes come from the output shapes (a second "split" input is ignored).
// Both are a loop over the dims before the axis copying one contiguous chunk
// per operand; a chunk already in place (same address) is skipped.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// Checks that `parts` concatenated along `axis` give `whole`.
Status CheckParts(const TensorArg& whole, const TensorArg* parts, uint32_t count,
                  int32_t axis_param) {
  BATON_RETURN_IF_ERROR(CheckRank(whole));
  BATON_KCHECK(axis_param >= 0 && static_cast<uint32_t>(axis_param) < whole.rank(),
               "axis out of range");
  const uint32_t axis = static_cast<uint32_t>(axis_param);
  int64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const TensorArg& t = parts[i];
    BATON_KCHECK(t.present(), "missing operand");
    BATON_KCHECK(t.dtype() == whole.dtype(), "operand dtypes differ");
    BATON_KCHECK(t.rank() == whole.rank(), "operand ranks differ");
    for (uint32_t d = 0; d < whole.rank(); ++d) {
      if (d != axis) BATON_KCHECK(t.dim(d) == whole.dim(d), "operand shapes differ off the axis");
    }
    total += t.dim(axis);
  }
  BATON_KCHECK(total == whole.dim(axis), "operand sizes along the axis do not add up");
  BATON_KCHECK(DTypeSize(whole.dtype()) != 0, "unknown dtype");
  return Status::Ok();
}

int32_t AxisOf(const KernelCall& call) {
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  return p ? p->axis() : -1;
}

// Concat (to_whole) or Split: per index of the dims before the axis, one
// chunk per part, in order; a chunk already in place is not copied.
void CopyParts(const TensorArg& whole, const TensorArg* parts, uint32_t count, int32_t axis_param,
               bool to_whole) {
  const uint32_t axis = static_cast<uint32_t>(axis_param);
  const int64_t outer = DimProduct(whole, 0, axis);
  const size_t unit =
      static_cast<size_t>(DimProduct(whole, axis + 1, whole.rank())) * DTypeSize(whole.dtype());
  uint8_t* w = static_cast<uint8_t*>(whole.data);
  for (int64_t o = 0; o < outer; ++o) {
    for (uint32_t i = 0; i < count; ++i) {
      const size_t chunk = static_cast<size_t>(parts[i].dim(axis)) * unit;
      uint8_t* p = static_cast<uint8_t*>(parts[i].data) + static_cast<size_t>(o) * chunk;
      if (p != w) memcpy(to_whole ? w : p, to_whole ? p : w, chunk);
      w += chunk;
    }
  }
}

Status ConcatPrepare(const KernelCall& call) {
  BATON_KCHECK(call.num_inputs >= 1 && call.num_outputs == 1, "Concat needs inputs, one output");
  BATON_KCHECK(call.outputs[0].present(), "output missing");
  BATON_KCHECK(call.node->params_as_AxisParams() != nullptr, "Concat needs AxisParams");
  return CheckParts(call.outputs[0], call.inputs, call.num_inputs, AxisOf(call));
}

Status ConcatEval(const KernelCall& call) {
  CopyParts(call.outputs[0], call.inputs, call.num_inputs, AxisOf(call), true);
  return Status::Ok();
}

Status SplitPrepare(const KernelCall& call) {
  BATON_KCHECK(call.num_inputs >= 1 && call.num_inputs <= 2 && call.num_outputs >= 1,
               "Split needs one input and outputs");
  BATON_KCHECK(call.inputs[0].present(), "required input missing");
  BATON_KCHECK(call.node->params_as_AxisParams() != nullptr, "Split needs AxisParams");
  return CheckParts(call.inputs[0], call.outputs, call.num_outputs, AxisOf(call));
}

Status SplitEval(const KernelCall& call) {
  CopyParts(call.inputs[0], call.outputs, call.num_outputs, AxisOf(call), false);
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kConcatSplitEntries[] = {
    {Op::Concat, kAllDeviceKinds, ConcatPrepare, ConcatEval, nullptr},
    {Op::Split, kAllDeviceKinds, SplitPrepare, SplitEval, nullptr},
};
BATON_KERNEL_FAMILY(ConcatSplit, kConcatSplitEntries);

}  // namespace kernels
}  // namespace baton
