// MaxPool, AveragePool (1-D/2-D, pads, strides, dilations, ceil_mode,
// count_include_pad) and GlobalAveragePool / GlobalMaxPool. The max pools
// also take uint8 and int8 (x and y one dtype): the maximum commutes with
// quantization, so the planner runs DequantizeLinear -> MaxPool ->
// QuantizeLinear with equal parameters on the 8-bit tensor.
//
// A window that starts in the end padding (ceil_mode) is clipped: AveragePool
// divides by the taps inside input + pads (count_include_pad) or by the taps
// inside the input, as ONNX and PyTorch do. Each output row accumulates one
// tap at a time over the columns where that tap is valid.

#include <limits>
#include <type_traits>

#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_util.h"
#include "window.h"

namespace baton {
namespace kernels {
namespace {

// float32, or (max pools) uint8 or int8, x and y alike.
Status CheckPoolDTypes(const KernelCall& call, bool max) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const DType d = call.inputs[0].dtype();
  BATON_KCHECK(call.outputs[0].dtype() == d, "pool input and output dtypes differ");
  BATON_KCHECK(d == DType::Float32 || (max && IsQ8(d)),
               "pool dtype must be float32 (max pools: also uint8, int8)");
  return Status::Ok();
}

Status ParsePool(const KernelCall& call, Window2d* out, bool* out_include_pad) {
  BATON_RETURN_IF_ERROR(CheckPoolDTypes(call, call.node->op() == Op::MaxPool));
  const schema::PoolParams* p = call.node->params_as_PoolParams();
  BATON_KCHECK(p != nullptr, "pool needs PoolParams");
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  Window2d g;
  BATON_RETURN_IF_ERROR(
      ParseWindow(x, y, p->kernel(), p->strides(), p->pads(), p->dilations(), &g));
  BATON_KCHECK(y.dim(0) == g.n && y.dim(1) == g.c, "pool output N or C mismatch");
  const bool ceil = p->ceil_mode();
  // With ceil_mode, accept the output size with or without the rule that
  // drops a last window starting in the end padding.
  const auto ok = [ceil](int64_t size, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb,
                         int64_t pe) {
    if (size == WindowOutputSize(in, k, s, d, pb, pe, ceil)) return true;
    const int64_t span = in + pb + pe - d * (k - 1) - 1;
    return ceil && span >= 0 && size == CeilDiv(span, s) + 1;
  };
  BATON_KCHECK(
      ok(g.oh, g.h, g.kh, g.sh, g.dh, g.pt, g.pb) && ok(g.ow, g.w, g.kw, g.sw, g.dw, g.pl, g.pr),
      "pool output spatial shape mismatch");
  *out = g;
  *out_include_pad = p->count_include_pad();
  return Status::Ok();
}

template <typename T>
struct MaxOp {
  using Type = T;
  static T Init() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
  static T Combine(T acc, T v) { return v > acc ? v : acc; }
};
struct SumOp {
  using Type = float;
  static float Init() { return 0.0f; }
  static float Combine(float acc, float v) { return acc + v; }
};

constexpr int64_t MinI(int64_t a, int64_t b) { return a < b ? a : b; }
constexpr int64_t MaxI(int64_t a, int64_t b) { return a > b ? a : b; }

// yr[ox] = Combine(yr[ox], xr[ox * sw + off]) for ox in [lo, hi).
template <typename Op, typename T>
void CombineTap(const T* __restrict xr, int64_t off, int64_t sw, int64_t lo, int64_t hi,
                T* __restrict yr) {
  if (sw == 1) {
    for (int64_t ox = lo; ox < hi; ++ox) yr[ox] = Op::Combine(yr[ox], xr[ox + off]);
  } else {
    for (int64_t ox = lo; ox < hi; ++ox) yr[ox] = Op::Combine(yr[ox], xr[ox * sw + off]);
  }
}

// y[i] = Combine(Combine(Combine(y[i], xs[S * i]), xs[S * i + 1]), xs[S * i + 2])
// for i < n: the three taps of a window row in one pass, in the order the
// per-tap passes take them (so the same results, NaNs and float sums
// included). GCC vectorizes both strides.
template <typename Op, int S, typename T>
void CombineRow3(const T* __restrict xs, int64_t n, T* __restrict y) {
  for (int64_t i = 0; i < n; ++i) {
    T acc = Op::Combine(y[i], xs[S * i]);
    acc = Op::Combine(acc, xs[S * i + 1]);
    y[i] = Op::Combine(acc, xs[S * i + 2]);
  }
}

// Per window column kx < kCachedTaps, the outputs [lo, hi) whose tap kx is
// inside the input row, and for 3-wide undilated windows of stride 1 or 2
// (the common ones) the outputs [lo_all, hi_all) whose taps all are: the
// same for every row, so computed once per call (each costs two divisions).
constexpr int64_t kCachedTaps = 8;
// Float pools only take CombineRow3: the 8-bit max pools keep the per-tap
// passes (code size on microcontrollers; they are rarely a model's hot spot).
template <typename T>
constexpr bool kRow3For = std::is_same<T, float>::value;
struct TapRanges {
  int64_t lo[kCachedTaps] = {}, hi[kCachedTaps] = {};
  int64_t lo_all = 0, hi_all = 0;
  bool row3 = false;
};

TapRanges MakeTapRanges(const Window2d& g, bool row3) {
  TapRanges r;
  for (int64_t kx = 0; kx < g.kw && kx < kCachedTaps; ++kx) {
    ValidRange(g.ow, g.w, g.sw, kx * g.dw - g.pl, &r.lo[kx], &r.hi[kx]);
  }
  r.row3 = row3 && g.kw == 3 && g.dw == 1 && (g.sw == 1 || g.sw == 2);
  if (r.row3) {
    r.lo_all = MaxI(r.lo[0], r.lo[2]);
    r.hi_all = MaxI(r.lo_all, MinI(r.hi[0], r.hi[2]));
  }
  return r;
}

// yr[ox] = Combine over the valid taps of window (oy, ox). Outputs whose
// taps are all inside the row take CombineRow3 where r.row3 (float pools);
// the edges and every other window, one pass per tap.
template <typename Op, typename T = typename Op::Type>
void PoolRow(const Window2d& g, const TapRanges& r, const T* x, int64_t oy, T* __restrict yr) {
  constexpr bool kRow3 = kRow3For<T>;
  for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] = Op::Init();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
    if (iy < 0 || iy >= g.h) continue;
    const T* __restrict xr = x + iy * g.w;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t off = kx * g.dw - g.pl;
      int64_t lo, hi;
      if (kx < kCachedTaps) {
        lo = r.lo[kx];
        hi = r.hi[kx];
      } else {
        ValidRange(g.ow, g.w, g.sw, off, &lo, &hi);
      }
      if (kRow3 && r.row3) {
        CombineTap<Op>(xr, off, g.sw, lo, MinI(hi, r.lo_all), yr);
        CombineTap<Op>(xr, off, g.sw, MaxI(lo, r.hi_all), hi, yr);
      } else {
        CombineTap<Op>(xr, off, g.sw, lo, hi, yr);
      }
    }
    if constexpr (kRow3) {
      if (r.hi_all > r.lo_all) {
        const T* xs = xr + r.lo_all * g.sw - g.pl;
        if (g.sw == 1) {
          CombineRow3<Op, 1>(xs, r.hi_all - r.lo_all, yr + r.lo_all);
        } else {
          CombineRow3<Op, 2>(xs, r.hi_all - r.lo_all, yr + r.lo_all);
        }
      }
    }
  }
}

Status PoolPrepare(const KernelCall& call) {
  Window2d g;
  bool include_pad;
  return ParsePool(call, &g, &include_pad);
}

// PoolRow<Op> over every output row of every (n, c) plane; each row is then
// handed to finish(g, include_pad, oy, row).
template <typename Op, typename Finish, typename T = typename Op::Type>
Status WindowPoolEval(const KernelCall& call, Finish finish) {
  Window2d g;
  bool include_pad;
  BATON_RETURN_IF_ERROR(ParsePool(call, &g, &include_pad));
  const T* x = static_cast<const T*>(call.inputs[0].data);
  T* y = static_cast<T*>(call.outputs[0].data);
  const TapRanges ranges = MakeTapRanges(g, kRow3For<T>);
  for (int64_t p = 0; p < g.n * g.c; ++p) {
    const T* xp = x + p * g.h * g.w;
    T* yp = y + p * g.oh * g.ow;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      T* yr = yp + oy * g.ow;
      PoolRow<Op>(g, ranges, xp, oy, yr);
      finish(g, include_pad, oy, yr);
    }
  }
  return Status::Ok();
}

template <typename T>
Status MaxPoolEvalT(const KernelCall& call) {
  return WindowPoolEval<MaxOp<T>>(call, [](const Window2d&, bool, int64_t, T*) {});
}

// Float max pools undilated along x take the separable plane filter
// compiled per instruction set (MaxPoolPlanes, gemm/window_isa.inc); the
// maximum ignores NaNs, so its order of taps gives the same numbers.
Status MaxPoolEvalF32(const KernelCall& call) {
  Window2d g;
  bool include_pad;
  BATON_RETURN_IF_ERROR(ParsePool(call, &g, &include_pad));
  if (g.dw != 1 || g.kw > kPoolRowFloats / 2) return MaxPoolEvalT<float>(call);
  const PoolPlane plane{g.h, g.w, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.dh, g.pt, g.pl};
  MaxPoolPlanes(plane, g.n * g.c, call.inputs[0].f32(), call.outputs[0].f32());
  return Status::Ok();
}

Status MaxPoolEval(const KernelCall& call) {
  switch (call.inputs[0].dtype()) {
    case DType::UInt8: return MaxPoolEvalT<uint8_t>(call);
    case DType::Int8: return MaxPoolEvalT<int8_t>(call);
    default: return MaxPoolEvalF32(call);
  }
}

Status AveragePoolEval(const KernelCall& call) {
  return WindowPoolEval<SumOp>(
      call, [](const Window2d& g, bool include_pad, int64_t oy, float* yr) {
        // Bounds that count towards the divisor.
        const int64_t y_lo = include_pad ? -g.pt : 0, y_hi = include_pad ? g.h + g.pb : g.h;
        const int64_t x_lo = include_pad ? -g.pl : 0, x_hi = include_pad ? g.w + g.pr : g.w;
        const int64_t cy = Window2d::TapsIn(oy * g.sh - g.pt, g.kh, g.dh, y_lo, y_hi);
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t count = cy * Window2d::TapsIn(ox * g.sw - g.pl, g.kw, g.dw, x_lo, x_hi);
          yr[ox] = count > 0 ? yr[ox] / static_cast<float>(count) : 0.0f;
        }
      });
}

Status GlobalPoolPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckPoolDTypes(call, call.node->op() == Op::GlobalMaxPool));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(x.rank() >= 3 && y.rank() == x.rank(), "global pool expects rank >= 3");
  BATON_KCHECK(y.dim(0) == x.dim(0) && y.dim(1) == x.dim(1), "global pool output N, C mismatch");
  for (uint32_t i = 2; i < y.rank(); ++i) {
    BATON_KCHECK(y.dim(i) == 1, "global pool output spatial dims must be 1");
  }
  return Status::Ok();
}

// y[p] = reduce(plane p, its size) for every (n, c) plane.
template <typename T, typename Reduce>
Status GlobalPoolEval(const KernelCall& call, Reduce reduce) {
  const TensorArg& x = call.inputs[0];
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = DimProduct(x, 2, x.rank());
  const T* xp = static_cast<const T*>(x.data);
  T* y = static_cast<T*>(call.outputs[0].data);
  for (int64_t p = 0; p < planes; ++p) y[p] = reduce(xp + p * size, size);
  return Status::Ok();
}

Status GlobalAveragePoolEval(const KernelCall& call) {
  return GlobalPoolEval<float>(call, [](const float* s, int64_t size) {
    return SumF32(s, size) * (size > 0 ? 1.0f / static_cast<float>(size) : 0.0f);
  });
}

template <typename T>
Status GlobalMaxPoolEvalT(const KernelCall& call) {
  return GlobalPoolEval<T>(call, [](const T* s, int64_t size) {
    T m = MaxOp<T>::Init();
    for (int64_t i = 0; i < size; ++i) m = MaxOp<T>::Combine(m, s[i]);
    return m;
  });
}

Status GlobalMaxPoolEval(const KernelCall& call) {
  switch (call.inputs[0].dtype()) {
    case DType::UInt8: return GlobalMaxPoolEvalT<uint8_t>(call);
    case DType::Int8: return GlobalMaxPoolEvalT<int8_t>(call);
    default: return GlobalMaxPoolEvalT<float>(call);
  }
}

}  // namespace

constexpr KernelEntry kPoolEntries[] = {
    {Op::MaxPool, kAllDeviceKinds, PoolPrepare, MaxPoolEval, nullptr},
    {Op::AveragePool, kAllDeviceKinds, PoolPrepare, AveragePoolEval, nullptr},
    {Op::GlobalAveragePool, kAllDeviceKinds, GlobalPoolPrepare, GlobalAveragePoolEval, nullptr},
    {Op::GlobalMaxPool, kAllDeviceKinds, GlobalPoolPrepare, GlobalMaxPoolEval, nullptr},
};
BATON_KERNEL_FAMILY(Pool, kPoolEntries);

}  // namespace kernels
}  // namespace baton
