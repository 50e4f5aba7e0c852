// QuantizeLinear and DequantizeLinear, per tensor or per axis (issue 15),
// DynamicQuantizeLinear, QLinearLookup and QLinearSoftmax (below):
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
//
// Inputs as in ONNX: x, scale (float32, one element or one per index of
// AxisParams.axis), zero point (optional; the quantized dtype). Quantize
// writes uint8 or int8; Dequantize reads uint8, int8 or int32. The arithmetic
// is the planner's host evaluator's (planner/src/ops/quant.cc) and ONNX
// Runtime's: a float division, rounding half to even, then the zero point,
// then saturation; NaN quantizes to the zero point.

#include <stdint.h>

#include <limits>
#include <type_traits>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// RoundHalfEven (kernel_util.h) needs |r| <= 2^22 and no NaN: ClampForRounding.
inline float ClampForRounding(float r) {
  const float kLimit = 4194304.0f;  // 2^22, beyond every 8-bit range plus zero point
  r = r == r ? r : 0.0f;
  r = r < -kLimit ? -kLimit : r;
  return r > kLimit ? kLimit : r;
}

// The slices along the quantization axis: outer x count x inner elements.
struct QuantLayout {
  int64_t outer = 1;
  int64_t count = 1;
  int64_t inner = 1;
};

Status CheckQuantParams(const KernelCall& call, DType quantized, QuantLayout* layout) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& scale = call.inputs[1];
  BATON_KCHECK(scale.dtype() == DType::Float32 && scale.rank() <= 1,
               "scale must be float32, 0-D or 1-D");
  const TensorArg& zero_point = Input(call, 2);
  if (zero_point.present()) {
    BATON_KCHECK(zero_point.dtype() == quantized && zero_point.elements() == scale.elements(),
                 "zero point must match scale and the quantized dtype");
  }
  BATON_KCHECK(SameShape(x, call.outputs[0]), "output shape mismatch");
  QuantLayout l;
  l.count = scale.elements();
  l.inner = x.elements();
  if (l.count != 1) {
    const schema::AxisParams* p = call.node->params_as_AxisParams();
    BATON_KCHECK(p != nullptr && p->axis() >= 0 && static_cast<uint32_t>(p->axis()) < x.rank(),
                 "per-axis quantization needs AxisParams with an axis of the input");
    const uint32_t axis = static_cast<uint32_t>(p->axis());
    BATON_KCHECK(x.dim(axis) == l.count, "scale needs one value per index of the axis");
    l.outer = DimProduct(x, 0, axis);
    l.inner = DimProduct(x, axis + 1, x.rank());
  }
  if (layout != nullptr) *layout = l;
  return Status::Ok();
}

template <typename Q>
void QuantizeSlices(const QuantLayout& l, const float* x, const float* scale, const Q* zero_point,
                    Q* y) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::min());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.count; ++c) {
      const float s = scale[c];
      const float zp = zero_point != nullptr ? static_cast<float>(zero_point[c]) : 0.0f;
      for (int64_t i = 0; i < l.inner; ++i) {
        float v = RoundHalfEven(ClampForRounding(x[i] / s)) + zp;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        y[i] = static_cast<Q>(static_cast<int32_t>(v));
      }
      x += l.inner;
      y += l.inner;
    }
  }
}

// The difference x - zero_point is exact in int32 for 8-bit inputs and in
// int64 for int32 ones (no overflow), then converted to float once.
template <typename Q>
void DequantizeSlices(const QuantLayout& l, const Q* x, const float* scale, const Q* zero_point,
                      float* y) {
  using Wide = typename std::conditional<sizeof(Q) == 4, int64_t, int32_t>::type;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.count; ++c) {
      const float s = scale[c];
      const Wide zp = zero_point != nullptr ? static_cast<Wide>(zero_point[c]) : 0;
      for (int64_t i = 0; i < l.inner; ++i) {
        y[i] = static_cast<float>(static_cast<Wide>(x[i]) - zp) * s;
      }
      x += l.inner;
      y += l.inner;
    }
  }
}

Status QuantizePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 3, 1));
  const DType out = call.outputs[0].dtype();
  BATON_KCHECK(call.inputs[0].dtype() == DType::Float32, "QuantizeLinear input must be float32");
  BATON_KCHECK(IsQ8(out), "QuantizeLinear output must be uint8 or int8");
  return CheckQuantParams(call, out, nullptr);
}

Status QuantizeEval(const KernelCall& call) {
  QuantLayout l;
  BATON_RETURN_IF_ERROR(CheckQuantParams(call, call.outputs[0].dtype(), &l));
  const float* x = call.inputs[0].f32();
  const float* scale = call.inputs[1].f32();
  const void* zp = Input(call, 2).data;
  if (call.outputs[0].dtype() == DType::Int8) {
    QuantizeSlices(l, x, scale, static_cast<const int8_t*>(zp),
                   static_cast<int8_t*>(call.outputs[0].data));
  } else {
    QuantizeSlices(l, x, scale, static_cast<const uint8_t*>(zp),
                   static_cast<uint8_t*>(call.outputs[0].data));
  }
  return Status::Ok();
}

Status DequantizePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 3, 1));
  const DType in = call.inputs[0].dtype();
  BATON_KCHECK(IsQ8(in) || in == DType::Int32,
               "DequantizeLinear input must be uint8, int8 or int32");
  BATON_KCHECK(call.outputs[0].dtype() == DType::Float32,
               "DequantizeLinear output must be float32");
  return CheckQuantParams(call, in, nullptr);
}

Status DequantizeEval(const KernelCall& call) {
  QuantLayout l;
  const DType in = call.inputs[0].dtype();
  BATON_RETURN_IF_ERROR(CheckQuantParams(call, in, &l));
  const void* x = call.inputs[0].data;
  const float* scale = call.inputs[1].f32();
  const void* zp = Input(call, 2).data;
  float* y = call.outputs[0].f32();
  if (in == DType::Int8) {
    DequantizeSlices(l, static_cast<const int8_t*>(x), scale, static_cast<const int8_t*>(zp), y);
  } else if (in == DType::UInt8) {
    DequantizeSlices(l, static_cast<const uint8_t*>(x), scale, static_cast<const uint8_t*>(zp), y);
  } else {
    DequantizeSlices(l, static_cast<const int32_t*>(x), scale, static_cast<const int32_t*>(zp), y);
  }
  return Status::Ok();
}

// DynamicQuantizeLinear: x float32 -> y uint8 (x's shape), y_scale float32
// and y_zero_point uint8 (one element each), with ONNX Runtime's arithmetic
// (GetQuantizationParameter, then MlasQuantizeLinear):
//   lo = min(min(x), 0), hi = max(max(x), 0)
//   scale = hi == lo ? 1 : (hi - lo) / 255
//   zero_point = round_half_even(clamp(0 - lo / scale, 0, 255))
//   y = QuantizeLinear(x, scale, zero_point)
Status DynamicQuantizePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 3));
  const TensorArg& x = call.inputs[0];
  BATON_KCHECK(x.dtype() == DType::Float32, "DynamicQuantizeLinear input must be float32");
  BATON_KCHECK(call.outputs[0].dtype() == DType::UInt8 && SameShape(x, call.outputs[0]),
               "DynamicQuantizeLinear y must be uint8 of x's shape");
  BATON_KCHECK(call.outputs[1].dtype() == DType::Float32 && call.outputs[1].elements() == 1,
               "DynamicQuantizeLinear y_scale must be one float32");
  BATON_KCHECK(call.outputs[2].dtype() == DType::UInt8 && call.outputs[2].elements() == 1,
               "DynamicQuantizeLinear y_zero_point must be one uint8");
  return Status::Ok();
}

Status DynamicQuantizeEval(const KernelCall& call) {
  const float* x = call.inputs[0].f32();
  const int64_t n = call.inputs[0].elements();
  float lo = 0.0f, hi = 0.0f;  // the range always includes zero
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float z = 0.0f - lo / scale;
  z = z == z ? z : 0.0f;  // an infinite range
  z = z < 0.0f ? 0.0f : z;
  z = z > 255.0f ? 255.0f : z;
  const uint8_t zero_point = static_cast<uint8_t>(static_cast<int32_t>(RoundHalfEven(z)));
  *call.outputs[1].f32() = scale;
  *static_cast<uint8_t*>(call.outputs[2].data) = zero_point;
  QuantLayout l;
  l.inner = n;
  QuantizeSlices(l, x, &scale, &zero_point, static_cast<uint8_t*>(call.outputs[0].data));
  return Status::Ok();
}

// QLinearLookup: x uint8 or int8, a 256-entry table of y's 8-bit dtype
// indexed by x minus its dtype's lowest value.
Status LookupPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& table = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(IsQ8(x.dtype()) && IsQ8(y.dtype()) && table.dtype() == y.dtype(),
               "QLinearLookup: x, table and y must be uint8 or int8, table as y");
  BATON_KCHECK(table.elements() == 256, "QLinearLookup table must have 256 elements");
  BATON_KCHECK(y.elements() == x.elements(), "QLinearLookup output size mismatch");
  return Status::Ok();
}

Status LookupEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const uint8_t* xp = static_cast<const uint8_t*>(x.data);
  const uint8_t* table = static_cast<const uint8_t*>(call.inputs[1].data);
  uint8_t* y = static_cast<uint8_t*>(call.outputs[0].data);
  // int8 x: the two's-complement byte plus 128 is x - (-128).
  const uint8_t flip = x.dtype() == DType::Int8 ? 0x80 : 0;
  const int64_t n = x.elements();
  for (int64_t i = 0; i < n; ++i) y[i] = table[xp[i] ^ flip];
  return Status::Ok();
}

// QLinearSoftmax: ONNX Runtime's com.microsoft QLinearSoftmax, to the bit.
// Along the axis, with m the largest x and e the planner's table of 256
// exponentials (e[d] = exp((shift - d) * x_scale) as float, SoftmaxExpTable
// in planner/src/import/simplify.cc):
//   sum = e[m - x_0] + e[m - x_1] + ...                     (float, in order)
//   y_i = saturate(round_half_even(e[m - x_i] * floor(1 / y_scale) / sum)
//                  + y_zero_point)                           (float)
// x_scale and x_zero_point only shape the table (the zero point cancels in
// m - x). The planner keeps e[0] * floor(1 / y_scale) finite.
Status QSoftmaxPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 6, 6, 1));
  const TensorArg& x = call.inputs[0];
  const DType t = x.dtype();
  BATON_KCHECK(IsQ8(t) && call.outputs[0].dtype() == t && SameShape(x, call.outputs[0]),
               "QLinearSoftmax: x and y must be uint8 or int8 of one dtype and shape");
  for (uint32_t i = 1; i < 5; ++i) {
    const TensorArg& p = call.inputs[i];
    BATON_KCHECK(p.elements() == 1 && p.dtype() == (i == 1 || i == 3 ? DType::Float32 : t),
                 "QLinearSoftmax: scales float32, zero points x's dtype, one element each");
  }
  BATON_KCHECK(call.inputs[5].dtype() == DType::Float32 && call.inputs[5].elements() == 256,
               "QLinearSoftmax table must be 256 float32 values");
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(p != nullptr && p->axis() >= 0 && static_cast<uint32_t>(p->axis()) < x.rank(),
               "QLinearSoftmax needs AxisParams with an axis of x");
  return Status::Ok();
}

// One loop serves both dtypes: an int8 byte XOR 0x80 is x + 128, which keeps
// max - x, and the result byte is the low 8 bits of y either way.
Status QSoftmaxEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const uint32_t axis = static_cast<uint32_t>(call.node->params_as_AxisParams()->axis());
  const int64_t outer = DimProduct(x, 0, axis);
  const int64_t len = x.dim(axis);
  const int64_t inner = DimProduct(x, axis + 1, x.rank());
  const float* e = call.inputs[5].f32();
  // floor(1 / y_scale), exact for a positive quotient below 2^24 (the
  // planner's condition; checked here, where the value is readable).
  const float inv = 1.0f / *call.inputs[3].f32();
  BATON_KCHECK(inv > 0.0f && inv < 16777216.0f, "QLinearSoftmax y_scale out of range");
  const float scale = static_cast<float>(static_cast<int32_t>(inv));
  const bool is_int8 = x.dtype() == DType::Int8;
  const uint8_t flip = is_int8 ? 0x80 : 0;
  const int32_t hi = is_int8 ? 127 : 255;
  const int32_t zero_point = is_int8 ? *static_cast<const int8_t*>(call.inputs[4].data)
                                     : *static_cast<const uint8_t*>(call.inputs[4].data);
  const uint8_t* xp = static_cast<const uint8_t*>(x.data);
  uint8_t* yp = static_cast<uint8_t*>(call.outputs[0].data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const uint8_t* xs = xp + o * len * inner + i;
      uint8_t* ys = yp + o * len * inner + i;
      int32_t m = 0;
      for (int64_t a = 0; a < len; ++a) {
        const int32_t v = xs[a * inner] ^ flip;
        m = v > m ? v : m;
      }
      float sum = 0.0f;
      for (int64_t a = 0; a < len; ++a) sum += e[m - (xs[a * inner] ^ flip)];
      for (int64_t a = 0; a < len; ++a) {
        const float r = e[m - (xs[a * inner] ^ flip)] * scale / sum;
        const int32_t v = static_cast<int32_t>(RoundHalfEven(ClampForRounding(r))) + zero_point;
        ys[a * inner] = static_cast<uint8_t>(v > hi ? hi : v);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kQuantEntries[] = {
    {Op::QLinearLookup, kAllDeviceKinds, LookupPrepare, LookupEval, nullptr},
    {Op::QLinearSoftmax, kAllDeviceKinds, QSoftmaxPrepare, QSoftmaxEval, nullptr},
    {Op::QuantizeLinear, kAllDeviceKinds, QuantizePrepare, QuantizeEval, nullptr},
    {Op::DequantizeLinear, kAllDeviceKinds, DequantizePrepare, DequantizeEval, nullptr},
    {Op::DynamicQuantizeLinear, kAllDeviceKinds, DynamicQuantizePrepare, DynamicQuantizeEval,
     nullptr},
};
BATON_KERNEL_FAMILY(Quant, kQuantEntries);

}  // namespace kernels
}  // namespace baton
