// Slice, any dtype. The planner normalizes SliceParams to one entry per
// dimension (axes 0..rank-1, starts clamped and non-negative, steps non-zero
// and possibly negative); the output shape gives the element count per
// dimension. Output index i along d reads input index starts[d] + i*steps[d].
// Extra inputs (ONNX starts/ends/axes/steps tensors) are ignored.

#include "kernel_family.h"
#include "kernel_util.h"
#include "layout.h"

namespace baton {
namespace kernels {
namespace {

Status SlicePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckLayoutPrepare(call, 5, BATON_MSG("Slice dtype mismatch"),
                                           BATON_MSG("Slice output rank != input rank")));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::SliceParams* p = call.node->params_as_SliceParams();
  BATON_KCHECK(p != nullptr && p->starts() && p->steps(), "Slice needs SliceParams");
  const uint32_t r = x.rank();
  BATON_KCHECK(p->starts()->size() == r && p->steps()->size() == r,
               "SliceParams must have one start and step per dimension");
  BATON_KCHECK(!p->ends() || p->ends()->size() == r, "SliceParams ends length mismatch");
  BATON_KCHECK(!p->axes() || p->axes()->size() == r, "SliceParams axes length mismatch");
  for (uint32_t d = 0; d < r; ++d) {
    if (p->axes())
      BATON_KCHECK(p->axes()->Get(d) == static_cast<int32_t>(d), "Slice axes not normalized");
    const int64_t start = LongAt(p->starts(), d);
    const int64_t step = LongAt(p->steps(), d);
    const int64_t count = y.dim(d);
    BATON_KCHECK(step != 0, "Slice step is zero");
    BATON_KCHECK(start >= 0, "Slice start is negative");
    if (p->ends()) {
      const int64_t end = LongAt(p->ends(), d);
      int64_t expect = step > 0 ? CeilDiv(end - start, step) : CeilDiv(start - end, -step);
      expect = expect < 0 ? 0 : expect;
      BATON_KCHECK(count == expect, "Slice output shape does not match starts/ends/steps");
    }
    if (count > 0) {
      const int64_t last = start + (count - 1) * step;
      BATON_KCHECK(start < x.dim(d) && last >= 0 && last < x.dim(d), "Slice reads out of range");
    }
  }
  return Status::Ok();
}

Status SliceEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::SliceParams* p = call.node->params_as_SliceParams();
  const uint32_t r = x.rank();
  if (y.elements() == 0) return Status::Ok();
  int64_t stride[kMaxRank];  // input element strides
  ContiguousStrides(x, stride);
  int64_t size[kMaxRank];
  int64_t base = 0;        // input offset of output element 0
  int64_t step[kMaxRank];  // input offset per output index, per dim
  for (uint32_t d = 0; d < r; ++d) {
    size[d] = y.dim(d);
    base += LongAt(p->starts(), d) * stride[d];
    step[d] = LongAt(p->steps(), d) * stride[d];
  }
  CopyStridedView(y.data, x.data, base, size, step, r, DTypeSize(x.dtype()));
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kSliceEntries[] = {
    {Op::Slice, kAllDeviceKinds, SlicePrepare, SliceEval, nullptr},
};
BATON_KERNEL_FAMILY(Slice, kSliceEntries);

}  // namespace kernels
}  // namespace baton
