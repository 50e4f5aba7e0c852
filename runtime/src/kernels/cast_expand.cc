// Cast between float32, int32, int64, uint8, int8 and bool, and Expand (a
// broadcast copy of any dtype to the output's shape).
//
// Cast follows the planner's host evaluator (planner/src/ops/shape_math.cc):
// to bool, x != 0; float to integer truncates toward zero, saturating at the
// target's range (NaN gives 0); between integers, two's complement
// wrap-around (numpy's astype); bool is 0 or 1.

#include <string.h>

#include <limits>
#include <type_traits>

#include "broadcast_n.h"
#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

template <typename To, typename From>
To CastValue(From v, bool to_bool) {
  if (to_bool) return static_cast<To>(v != 0 ? 1 : 0);
  if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    if (v != v) return 0;  // NaN
    const double d = static_cast<double>(v);
    if (d <= static_cast<double>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
void CastLoop(const void* x, void* y, int64_t n, bool to_bool) {
  const From* src = static_cast<const From*>(x);
  To* dst = static_cast<To*>(y);
  for (int64_t i = 0; i < n; ++i) dst[i] = CastValue<To>(src[i], to_bool);
}

// Bool is stored as uint8_t.
template <typename From>
void CastFrom(DType to, const void* x, void* y, int64_t n) {
  switch (to) {
    case DType::Float32:
      return CastLoop<float, From>(x, y, n, false);
    case DType::Int32:
      return CastLoop<int32_t, From>(x, y, n, false);
    case DType::Int64:
      return CastLoop<int64_t, From>(x, y, n, false);
    case DType::UInt8:
      return CastLoop<uint8_t, From>(x, y, n, false);
    case DType::Int8:
      return CastLoop<int8_t, From>(x, y, n, false);
    case DType::Bool:
      return CastLoop<uint8_t, From>(x, y, n, true);
  }
}

Status CastPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_KCHECK(DTypeSize(call.inputs[0].dtype()) != 0 && DTypeSize(call.outputs[0].dtype()) != 0,
               "Cast dtype unknown");
  BATON_KCHECK(SameShape(call.inputs[0], call.outputs[0]), "Cast output shape mismatch");
  return Status::Ok();
}

Status CastEval(const KernelCall& call) {
  const void* x = call.inputs[0].data;
  void* y = call.outputs[0].data;
  const DType to = call.outputs[0].dtype();
  const int64_t n = call.outputs[0].elements();
  switch (call.inputs[0].dtype()) {
    case DType::Float32:
      CastFrom<float>(to, x, y, n);
      break;
    case DType::Int32:
      CastFrom<int32_t>(to, x, y, n);
      break;
    case DType::Int64:
      CastFrom<int64_t>(to, x, y, n);
      break;
    case DType::UInt8:
    case DType::Bool:
      CastFrom<uint8_t>(to, x, y, n);
      break;
    case DType::Int8:
      CastFrom<int8_t>(to, x, y, n);
      break;
  }
  return Status::Ok();
}

// Expand reads only its data input; the shape input is folded into the
// output's shape by the planner.
Status ExpandPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const DType d = call.inputs[0].dtype();
  BATON_KCHECK(call.outputs[0].dtype() == d && DTypeSize(d) != 0, "Expand dtype mismatch");
  int64_t strides[1][kMaxRank];
  return BroadcastStrides(call.inputs[0], call.outputs[0], strides[0]);
}

Status ExpandEval(const KernelCall& call) {
  int64_t strides[1][kMaxRank];
  BATON_RETURN_IF_ERROR(BroadcastStrides(call.inputs[0], call.outputs[0], strides[0]));
  const uint8_t* x = static_cast<const uint8_t*>(call.inputs[0].data);
  uint8_t* y = static_cast<uint8_t*>(call.outputs[0].data);
  const size_t esize = DTypeSize(call.outputs[0].dtype());
  ForEachBroadcast(call.outputs[0], strides, [&](int64_t i, const int64_t* o) {
    memcpy(y + static_cast<size_t>(i) * esize, x + static_cast<size_t>(o[0]) * esize, esize);
  });
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kCastExpandEntries[] = {
    {Op::Cast, kAllDeviceKinds, CastPrepare, CastEval, nullptr},
    {Op::Expand, kAllDeviceKinds, ExpandPrepare, ExpandEval, nullptr},
};
BATON_KERNEL_FAMILY(CastExpand, kCastExpandEntries);

}  // namespace kernels
}  // namespace baton
