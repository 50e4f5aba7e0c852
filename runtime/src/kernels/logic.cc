// Equal, Greater, Less (float32, int32 or int64 operands; Equal also bool),
// Not and And (bool), Where (bool condition, operands of any one dtype): bool
// tensors hold one byte per element, 0 or 1. All broadcast numpy-style.

#include <string.h>

#include "broadcast_n.h"
#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

struct EqualOp {
  template <typename T>
  static bool Apply(T a, T b) {
    return a == b;
  }
};
struct GreaterOp {
  template <typename T>
  static bool Apply(T a, T b) {
    return a > b;
  }
};
struct LessOp {
  template <typename T>
  static bool Apply(T a, T b) {
    return a < b;
  }
};
struct AndOp {
  template <typename T>
  static bool Apply(T a, T b) {
    return a != 0 && b != 0;
  }
};

template <typename Op, typename T>
void Compare(const KernelCall& call, const int64_t (&strides)[2][kMaxRank]) {
  const T* a = static_cast<const T*>(call.inputs[0].data);
  const T* b = static_cast<const T*>(call.inputs[1].data);
  uint8_t* y = static_cast<uint8_t*>(call.outputs[0].data);
  ForEachBroadcast(call.outputs[0], strides, [&](int64_t i, const int64_t* o) {
    y[i] = Op::Apply(a[o[0]], b[o[1]]) ? 1 : 0;
  });
}

Status BinaryStrides(const KernelCall& call, int64_t (&strides)[2][kMaxRank]) {
  BATON_RETURN_IF_ERROR(BroadcastStrides(call.inputs[0], call.outputs[0], strides[0]));
  return BroadcastStrides(call.inputs[1], call.outputs[0], strides[1]);
}

// kBoolOnly: And; kAllowBool: Equal.
template <bool kBoolOnly, bool kAllowBool>
Status ComparePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  const DType d = call.inputs[0].dtype();
  BATON_KCHECK(call.inputs[1].dtype() == d, "operands have different dtypes");
  BATON_KCHECK(call.outputs[0].dtype() == DType::Bool, "output must be bool");
  if (kBoolOnly) {
    BATON_KCHECK(d == DType::Bool, "operands must be bool");
  } else {
    BATON_KCHECK(d == DType::Float32 || d == DType::Int32 || d == DType::Int64 ||
                     (kAllowBool && d == DType::Bool),
                 "operands must be float32, int32 or int64");
  }
  int64_t strides[2][kMaxRank];
  return BinaryStrides(call, strides);
}

template <typename Op>
Status CompareEval(const KernelCall& call) {
  int64_t strides[2][kMaxRank];
  BATON_RETURN_IF_ERROR(BinaryStrides(call, strides));
  switch (call.inputs[0].dtype()) {
    case DType::Float32:
      Compare<Op, float>(call, strides);
      break;
    case DType::Int32:
      Compare<Op, int32_t>(call, strides);
      break;
    case DType::Int64:
      Compare<Op, int64_t>(call, strides);
      break;
    default:
      Compare<Op, uint8_t>(call, strides);
      break;  // bool
  }
  return Status::Ok();
}

Status NotPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_KCHECK(call.inputs[0].dtype() == DType::Bool && call.outputs[0].dtype() == DType::Bool,
               "Not takes and gives bool");
  BATON_KCHECK(SameShape(call.inputs[0], call.outputs[0]), "Not output shape mismatch");
  return Status::Ok();
}

Status NotEval(const KernelCall& call) {
  const uint8_t* x = static_cast<const uint8_t*>(call.inputs[0].data);
  uint8_t* y = static_cast<uint8_t*>(call.outputs[0].data);
  const int64_t n = call.outputs[0].elements();
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] == 0 ? 1 : 0;
  return Status::Ok();
}

Status WhereStrides(const KernelCall& call, int64_t (&strides)[3][kMaxRank]) {
  for (uint32_t k = 0; k < 3; ++k) {
    BATON_RETURN_IF_ERROR(BroadcastStrides(call.inputs[k], call.outputs[0], strides[k]));
  }
  return Status::Ok();
}

Status WherePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 3, 3, 1));
  BATON_KCHECK(call.inputs[0].dtype() == DType::Bool, "Where condition must be bool");
  const DType d = call.inputs[1].dtype();
  BATON_KCHECK(call.inputs[2].dtype() == d && call.outputs[0].dtype() == d && DTypeSize(d) != 0,
               "Where operands and output must share a dtype");
  int64_t strides[3][kMaxRank];
  return WhereStrides(call, strides);
}

Status WhereEval(const KernelCall& call) {
  int64_t strides[3][kMaxRank];
  BATON_RETURN_IF_ERROR(WhereStrides(call, strides));
  const uint8_t* cond = static_cast<const uint8_t*>(call.inputs[0].data);
  const uint8_t* x = static_cast<const uint8_t*>(call.inputs[1].data);
  const uint8_t* y = static_cast<const uint8_t*>(call.inputs[2].data);
  uint8_t* out = static_cast<uint8_t*>(call.outputs[0].data);
  const size_t esize = DTypeSize(call.outputs[0].dtype());
  ForEachBroadcast(call.outputs[0], strides, [&](int64_t i, const int64_t* o) {
    const uint8_t* src = cond[o[0]] != 0 ? x + static_cast<size_t>(o[1]) * esize
                                         : y + static_cast<size_t>(o[2]) * esize;
    memcpy(out + static_cast<size_t>(i) * esize, src, esize);
  });
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kLogicEntries[] = {
    {Op::Equal, kAllDeviceKinds, ComparePrepare<false, true>, CompareEval<EqualOp>, nullptr},
    {Op::Greater, kAllDeviceKinds, ComparePrepare<false, false>, CompareEval<GreaterOp>, nullptr},
    {Op::Less, kAllDeviceKinds, ComparePrepare<false, false>, CompareEval<LessOp>, nullptr},
    {Op::Not, kAllDeviceKinds, NotPrepare, NotEval, nullptr},
    {Op::And, kAllDeviceKinds, ComparePrepare<true, false>, CompareEval<AndOp>, nullptr},
    {Op::Where, kAllDeviceKinds, WherePrepare, WhereEval, nullptr},
};
BATON_KERNEL_FAMILY(Logic, kLogicEntries);

}  // namespace kernels
}  // namespace baton
