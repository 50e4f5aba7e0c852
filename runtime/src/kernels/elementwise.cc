// Add, Sub, Mul, Div, Pow, Max, Min, PRelu: float32 with numpy broadcasting
// and an optional fused clamp (ElementwiseParams). The innermost collapsed
// dimension runs as a tight loop specialized for contiguous / scalar
// operands. Pow also takes a scalar int32/int64 exponent and has flat fast
// paths for a scalar exponent (2: x * x, 0.5: sqrt).

#include <math.h>

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

struct PowOp {
  static float Apply(float a, float b) { return powf(a, b); }
};
// Max and Min propagate a NaN in either operand, as torch.maximum does.
struct MaxOp {
  static float Apply(float a, float b) { return (a > b || a != a) ? a : b; }
};
struct MinOp {
  static float Apply(float a, float b) { return (a < b || a != a) ? a : b; }
};
// PRelu: the slope (b) broadcasts to x (a).
struct PReluOp {
  static float Apply(float a, float b) { return a < 0.0f ? a * b : a; }
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
  const int64_t rows = Rows(bc);
  int64_t index[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t t = 0; t < rows; ++t) {
    Run<Op>(a + oa, bc.sa[inner], b + ob, bc.sb[inner], y, n);
    ApplyClamp(clamp, y, n);
    y += n;
    NextRow(bc, bc.sa, bc.sb, index, &oa, &ob);
  }
  return Status::Ok();
}

Status BinaryPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  Broadcast2 bc;
  return MakeBroadcast2(call.inputs[0], call.inputs[1], call.outputs[0], &bc);
}

// PRelu's output has x's shape: the slope must broadcast to x.
Status PReluPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(BinaryPrepare(call));
  BATON_KCHECK(SameShape(call.inputs[0], call.outputs[0]), "PRelu output shape != input");
  return Status::Ok();
}

bool IsScalar(const TensorArg& t) { return t.elements() == 1; }

// The value of a one-element exponent of any accepted dtype.
float ScalarExponent(const TensorArg& t) {
  if (t.dtype() == DType::Int64) {
    int64_t v;
    memcpy(&v, t.data, sizeof(v));
    return static_cast<float>(v);
  }
  if (t.dtype() == DType::Int32) {
    int32_t v;
    memcpy(&v, t.data, sizeof(v));
    return static_cast<float>(v);
  }
  return t.f32()[0];
}

Status PowPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  const TensorArg& e = call.inputs[1];
  BATON_KCHECK(call.inputs[0].dtype() == DType::Float32 &&
                   call.outputs[0].dtype() == DType::Float32,
               "Pow base and output must be float32");
  BATON_KCHECK(e.dtype() == DType::Float32 ||
                   ((e.dtype() == DType::Int64 || e.dtype() == DType::Int32) && IsScalar(e)),
               "Pow exponent must be float32, or an int32/int64 scalar");
  Broadcast2 bc;
  return MakeBroadcast2(call.inputs[0], e, call.outputs[0], &bc);
}

Status PowEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const TensorArg& te = call.inputs[1];
  const TensorArg& ty = call.outputs[0];
  if (!IsScalar(te) || tx.elements() != ty.elements()) return BinaryEval<PowOp>(call);
  const float e = ScalarExponent(te);
  const float* x = tx.f32();
  float* y = ty.f32();
  const int64_t n = ty.elements();
  if (e == 2.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
  } else if (e == 0.5f) {
    for (int64_t i = 0; i < n; ++i) y[i] = sqrtf(x[i]);
  } else if (e == 1.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = powf(x[i], e);
  }
  ApplyClamp(ClampOf(call), y, n);
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kElementwiseEntries[] = {
    {Op::Add, kAllDeviceKinds, BinaryPrepare, BinaryEval<AddOp>, nullptr},
    {Op::Sub, kAllDeviceKinds, BinaryPrepare, BinaryEval<SubOp>, nullptr},
    {Op::Mul, kAllDeviceKinds, BinaryPrepare, BinaryEval<MulOp>, nullptr},
    {Op::Div, kAllDeviceKinds, BinaryPrepare, BinaryEval<DivOp>, nullptr},
    {Op::Pow, kAllDeviceKinds, PowPrepare, PowEval, nullptr},
    {Op::Max, kAllDeviceKinds, BinaryPrepare, BinaryEval<MaxOp>, nullptr},
    {Op::Min, kAllDeviceKinds, BinaryPrepare, BinaryEval<MinOp>, nullptr},
    {Op::PRelu, kAllDeviceKinds, PReluPrepare, BinaryEval<PReluOp>, nullptr},
};
BATON_KERNEL_FAMILY(Elementwise, kElementwiseEntries);

}  // namespace kernels
}  // namespace baton
