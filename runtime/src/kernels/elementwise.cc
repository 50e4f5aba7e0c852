// Add, Sub, Mul, Div: float32 with numpy broadcasting and an optional fused
// clamp (ElementwiseParams). The innermost collapsed dimension runs as a
// tight loop specialized for contiguous / scalar operands.

#include "broadcast.h"
#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

struct AddOp {
  static float Apply(float a, float b) { return a + b; }
};
struct SubOp {
  static float Apply(float a, float b) { return a - b; }
};
struct MulOp {
  static float Apply(float a, float b) { return a * b; }
};
struct DivOp {
  static float Apply(float a, float b) { return a / b; }
};

template <typename Op>
void Run(const float* __restrict a, int64_t ia, const float* __restrict b, int64_t ib,
         float* __restrict y, int64_t n) {
  if (ia == 1 && ib == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(a[i], b[i]);
  } else if (ia == 1 && ib == 0) {
    const float bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(a[i], bv);
  } else if (ia == 0 && ib == 1) {
    const float av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(a[i * ia], b[i * ib]);
  }
}

Clamp ClampOf(const KernelCall& call) {
  const schema::ElementwiseParams* p = call.node->params_as_ElementwiseParams();
  return Clamp::From(p ? p->clamp() : nullptr);
}

template <typename Op>
Status BinaryEval(const KernelCall& call) {
  const TensorArg& ta = call.inputs[0];
  const TensorArg& tb = call.inputs[1];
  const TensorArg& ty = call.outputs[0];
  Broadcast2 bc;
  BATON_RETURN_IF_ERROR(MakeBroadcast2(ta, tb, ty, &bc));
  if (ty.elements() == 0) return Status::Ok();
  const Clamp clamp = ClampOf(call);
  const float* a = ta.f32();
  const float* b = tb.f32();
  float* y = ty.f32();
  const uint32_t inner = bc.rank - 1;
  const int64_t n = bc.shape[inner];
  int64_t outer = 1;
  for (uint32_t d = 0; d < inner; ++d) outer *= bc.shape[d];
  int64_t index[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t t = 0; t < outer; ++t) {
    Run<Op>(a + oa, bc.sa[inner], b + ob, bc.sb[inner], y, n);
    ApplyClamp(clamp, y, n);
    y += n;
    for (int32_t d = static_cast<int32_t>(inner) - 1; d >= 0; --d) {
      oa += bc.sa[d];
      ob += bc.sb[d];
      if (++index[d] < bc.shape[d]) break;
      oa -= bc.sa[d] * bc.shape[d];
      ob -= bc.sb[d] * bc.shape[d];
      index[d] = 0;
    }
  }
  return Status::Ok();
}

Status BinaryPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  Broadcast2 bc;
  return MakeBroadcast2(call.inputs[0], call.inputs[1], call.outputs[0], &bc);
}

}  // namespace

constexpr KernelEntry kElementwiseEntries[] = {
    {Op::Add, kAllDeviceKinds, BinaryPrepare, BinaryEval<AddOp>, nullptr},
    {Op::Sub, kAllDeviceKinds, BinaryPrepare, BinaryEval<SubOp>, nullptr},
    {Op::Mul, kAllDeviceKinds, BinaryPrepare, BinaryEval<MulOp>, nullptr},
    {Op::Div, kAllDeviceKinds, BinaryPrepare, BinaryEval<DivOp>, nullptr},
};
BATON_KERNEL_FAMILY(Elementwise, kElementwiseEntries);

}  // namespace kernels
}  // namespace baton
