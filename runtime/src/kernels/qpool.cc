// QLinearAveragePool and QLinearGlobalAveragePool (issue 15): the planner's
// fusion of DequantizeLinear -> AveragePool / GlobalAveragePool ->
// QuantizeLinear. Inputs x, x_scale, x_zero_point, y_scale, y_zero_point
// (com.microsoft's), x and y one 8-bit dtype. The arithmetic is ONNX
// Runtime's fused kernels', so that the outputs match it bit for bit:
//
//  - Global (and a window that is the whole unpadded plane): an exact int32
//    sum, then  q = round_half_even(clamp(float(sum - xz * size) * scale))
//    + yz  with  scale = x_scale / (y_scale * float(size))  and the clamp to
//    the output range around yz (MLAS's QLinearGlobalAveragePool).
//  - Other windows: the plane dequantized to float32 (x_scale * (x - xz)),
//    each window summed row by row from 0.0f, divided by float(count), then
//      q = saturate(round_half_even(avg / y_scale + float(yz))).
//    count is the kernel area with count_include_pad, else the taps inside
//    the input. The zero point is added before rounding: ONNX's
//    QuantizeLinear rounds first, which is why the unfused
//    DequantizeLinear -> AveragePool -> QuantizeLinear differs at ties.
//
//   workspace (windows only): float32 [h * w], one dequantized plane.

#include <stdint.h>

#include "kernel_family.h"
#include "kernel_util.h"
#include "window.h"

namespace baton {
namespace kernels {
namespace {

// An 8-bit tensor's element i, and its range.
struct Q8 {
  bool is_signed = false;
  int32_t At(const void* p, int64_t i) const {
    return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
  }
  int32_t Min() const { return is_signed ? -128 : 0; }
  int32_t Max() const { return is_signed ? 127 : 255; }
};

Status CheckQPoolInputs(const KernelCall& call, Q8* out) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 5, 5, 1));
  const DType t = call.inputs[0].dtype();
  BATON_KCHECK(IsQ8(t), "x must be uint8 or int8");
  BATON_KCHECK(call.outputs[0].dtype() == t, "y must have x's dtype");
  for (uint32_t i = 1; i < 5; ++i) {
    const TensorArg& a = call.inputs[i];
    BATON_KCHECK(a.present() && a.elements() == 1 &&
                     a.dtype() == (i == 1 || i == 3 ? DType::Float32 : t),
                 "scales must be one float32, zero points one element of x's dtype");
  }
  out->is_signed = t == DType::Int8;
  return Status::Ok();
}

// Requantization of the global form, in ONNX Runtime's order.
struct GlobalRequant {
  float scale, lo, hi;
  uint32_t x_bias;  // -x_zero * size, modulo 2^32
  int32_t y_zero;
};

GlobalRequant GlobalRequantOf(const KernelCall& call, const Q8& q, int64_t size) {
  GlobalRequant r;
  const float x_scale = call.inputs[1].f32()[0];
  const float y_scale = call.inputs[3].f32()[0];
  r.scale = x_scale / (y_scale * static_cast<float>(size));
  r.x_bias = 0u - static_cast<uint32_t>(q.At(call.inputs[2].data, 0)) * static_cast<uint32_t>(size);
  r.y_zero = q.At(call.inputs[4].data, 0);
  r.lo = static_cast<float>(q.Min() - r.y_zero);
  r.hi = static_cast<float>(q.Max() - r.y_zero);
  return r;
}

// One output of the global form from the plane's sum. The sum and the bias
// wrap modulo 2^32 as ONNX Runtime's int32 vector adds do (only planes of
// more than 2^31 / 255 elements can wrap; size < 2^24 is checked), without
// C++'s signed overflow.
inline int32_t GlobalOutput(const GlobalRequant& r, uint32_t sum) {
  const auto acc = static_cast<int32_t>(sum + r.x_bias);  // two's complement
  float v = static_cast<float>(acc) * r.scale;
  v = v > r.lo ? v : r.lo;  // NaN -> lo, as SSE's maxps
  v = v < r.hi ? v : r.hi;
  return static_cast<int32_t>(RoundHalfEven(v)) + r.y_zero;
}

// planes x size elements of x -> planes outputs.
void GlobalPool(const KernelCall& call, const Q8& q, int64_t planes, int64_t size) {
  const GlobalRequant r = GlobalRequantOf(call, q, size);
  const void* x = call.inputs[0].data;
  auto* y = static_cast<uint8_t*>(call.outputs[0].data);
  for (int64_t p = 0; p < planes; ++p) {
    uint32_t sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += static_cast<uint32_t>(q.At(x, p * size + i));
    y[p] = static_cast<uint8_t>(GlobalOutput(r, sum));  // two's complement for int8
  }
}

Status ParseQAveragePool(const KernelCall& call, Q8* q, Window2d* out, bool* include_pad) {
  BATON_RETURN_IF_ERROR(CheckQPoolInputs(call, q));
  const schema::PoolParams* p = call.node->params_as_PoolParams();
  BATON_KCHECK(p != nullptr, "QLinearAveragePool needs PoolParams");
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  Window2d g;
  BATON_RETURN_IF_ERROR(
      ParseWindow(x, y, p->kernel(), p->strides(), p->pads(), p->dilations(), &g));
  BATON_KCHECK(g.dh == 1 && g.dw == 1, "QLinearAveragePool takes no dilation");
  BATON_KCHECK(y.dim(0) == g.n && y.dim(1) == g.c, "pool output N or C mismatch");
  const bool ceil = p->ceil_mode();
  BATON_KCHECK(g.oh == WindowOutputSize(g.h, g.kh, g.sh, 1, g.pt, g.pb, ceil) &&
                   g.ow == WindowOutputSize(g.w, g.kw, g.sw, 1, g.pl, g.pr, ceil),
               "pool output spatial shape mismatch");
  *out = g;
  *include_pad = p->count_include_pad();
  return Status::Ok();
}

// The window is the whole unpadded plane: ONNX Runtime's global form.
bool WholePlane(const Window2d& g) {
  return g.kh == g.h && g.kw == g.w && g.pt == 0 && g.pb == 0 && g.pl == 0 && g.pr == 0;
}

size_t QAveragePoolWorkspaceFor(const Window2d& g) {
  return WholePlane(g) ? 0 : static_cast<size_t>(g.h * g.w) * sizeof(float);
}

Status QAveragePoolPrepare(const KernelCall& call) {
  Q8 q;
  Window2d g;
  bool include_pad;
  BATON_RETURN_IF_ERROR(ParseQAveragePool(call, &q, &g, &include_pad));
  return CheckWorkspace(call, QAveragePoolWorkspaceFor(g));
}

size_t QAveragePoolWorkspaceBytes(const KernelCall& call) {
  Q8 q;
  Window2d g;
  bool include_pad;
  if (!ParseQAveragePool(call, &q, &g, &include_pad).ok()) return 0;
  return QAveragePoolWorkspaceFor(g);
}

inline int64_t MinI(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t MaxI(int64_t a, int64_t b) { return a > b ? a : b; }

Status QAveragePoolEval(const KernelCall& call) {
  Q8 q;
  Window2d g;
  bool include_pad;
  BATON_RETURN_IF_ERROR(ParseQAveragePool(call, &q, &g, &include_pad));
  if (WholePlane(g)) {
    GlobalPool(call, q, g.n * g.c, g.h * g.w);
    return Status::Ok();
  }
  const float x_scale = call.inputs[1].f32()[0];
  const float y_scale = call.inputs[3].f32()[0];
  const int32_t x_zero = q.At(call.inputs[2].data, 0);
  const float y_zero = static_cast<float>(q.At(call.inputs[4].data, 0));
  const float lo = static_cast<float>(q.Min()), hi = static_cast<float>(q.Max());
  const void* x = call.inputs[0].data;
  auto* y = static_cast<uint8_t*>(call.outputs[0].data);
  float* plane = WorkspaceF32(call);
  const int64_t size = g.h * g.w;
  for (int64_t p = 0; p < g.n * g.c; ++p) {
    for (int64_t i = 0; i < size; ++i) {
      plane[i] = x_scale * static_cast<float>(q.At(x, p * size + i) - x_zero);
    }
    uint8_t* yp = y + p * g.oh * g.ow;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t y0 = MaxI(oy * g.sh - g.pt, 0);
      const int64_t y1 = MinI(oy * g.sh - g.pt + g.kh, g.h);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t x0 = MaxI(ox * g.sw - g.pl, 0);
        const int64_t x1 = MinI(ox * g.sw - g.pl + g.kw, g.w);
        float sum = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy) {
          for (int64_t ix = x0; ix < x1; ++ix) sum += plane[iy * g.w + ix];
        }
        const int64_t count = include_pad ? g.kh * g.kw : MaxI(y1 - y0, 0) * MaxI(x1 - x0, 0);
        const float avg = count > 0 ? sum / static_cast<float>(count) : 0.0f;
        float v = avg / y_scale + y_zero;
        v = v > lo ? v : lo;  // NaN -> lo
        v = v < hi ? v : hi;
        yp[oy * g.ow + ox] = static_cast<uint8_t>(static_cast<int32_t>(RoundHalfEven(v)));
      }
    }
  }
  return Status::Ok();
}

Status QGlobalAveragePoolPrepare(const KernelCall& call) {
  Q8 q;
  BATON_RETURN_IF_ERROR(CheckQPoolInputs(call, &q));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(x.rank() >= 3 && y.rank() == x.rank(), "global pool expects rank >= 3");
  BATON_KCHECK(y.dim(0) == x.dim(0) && y.dim(1) == x.dim(1), "global pool output N, C mismatch");
  for (uint32_t i = 2; i < y.rank(); ++i) {
    BATON_KCHECK(y.dim(i) == 1, "global pool output spatial dims must be 1");
  }
  BATON_KCHECK(DimProduct(x, 2, x.rank()) < (int64_t{1} << 24), "plane of 2^24 or more elements");
  return Status::Ok();
}

Status QGlobalAveragePoolEval(const KernelCall& call) {
  Q8 q;
  BATON_RETURN_IF_ERROR(CheckQPoolInputs(call, &q));
  const TensorArg& x = call.inputs[0];
  GlobalPool(call, q, x.dim(0) * x.dim(1), DimProduct(x, 2, x.rank()));
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kQPoolEntries[] = {
    {Op::QLinearAveragePool, kAllDeviceKinds, QAveragePoolPrepare, QAveragePoolEval,
     QAveragePoolWorkspaceBytes},
    {Op::QLinearGlobalAveragePool, kAllDeviceKinds, QGlobalAveragePoolPrepare,
     QGlobalAveragePoolEval, nullptr},
};
BATON_KERNEL_FAMILY(QPool, kQPoolEntries);

}  // namespace kernels
}  // namespace baton
