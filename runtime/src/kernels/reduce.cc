// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL2 over
// ReduceParams.axes (non-negative, sorted; empty or absent means all axes).
// keepdims only changes the output shape, which the output tensor already
// carries. Runs of reduced / kept axes are collapsed, then the input is
// walked once in memory order, combining into the output.
// ArgMax, ArgMin (one axis in ReduceParams.axes, int64 output, first index
// on ties) and TopK (k is the output's size along the axis;
// equal values keep index order, as ONNX specifies) walk the axis per
// (outer, inner) position. TopK selects the largest k along AxisParams.axis
// (the planner turns largest=0 into Neg, TopK, Neg).

#include <math.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// Bit i set when input axis i is reduced.
Status ReducedAxes(const KernelCall& call, uint32_t* out_mask) {
  const TensorArg& x = call.inputs[0];
  const schema::ReduceParams* p = call.node->params_as_ReduceParams();
  const auto* axes = p ? p->axes() : nullptr;
  uint32_t mask = 0;
  if (axes == nullptr || axes->size() == 0) {
    mask = x.rank() == 0 ? 0 : (1u << x.rank()) - 1;
  } else {
    int32_t prev = -1;
    for (uint32_t i = 0; i < axes->size(); ++i) {
      const int32_t a = axes->Get(i);
      BATON_KCHECK(a > prev && static_cast<uint32_t>(a) < x.rank(),
                   "Reduce axes must be sorted, unique and in range");
      mask |= 1u << a;
      prev = a;
    }
  }
  *out_mask = mask;
  return Status::Ok();
}

// The output shape is the input's with the reduced axes removed or kept as 1.
Status CheckReducedShape(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(x));
  uint32_t mask;
  BATON_RETURN_IF_ERROR(ReducedAxes(call, &mask));
  const schema::ReduceParams* p = call.node->params_as_ReduceParams();
  const bool keepdims = p ? p->keepdims() : true;
  uint32_t j = 0;
  for (uint32_t i = 0; i < x.rank(); ++i) {
    const bool reduced = (mask >> i) & 1u;
    if (reduced && !keepdims) continue;
    BATON_KCHECK(j < y.rank() && y.dim(j) == (reduced ? 1 : x.dim(i)),
                 "Reduce output shape mismatch");
    ++j;
  }
  BATON_KCHECK(j == y.rank(), "Reduce output rank mismatch");
  return Status::Ok();
}

Status ReducePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  return CheckReducedShape(call);
}

// How each reduction starts, combines a row or an element, and finishes.
struct SumRed {
  static constexpr float kInit = 0.0f;
  static float Row(const float* x, int64_t n) { return SumF32(x, n); }
  // Merges a row's partial result (Row) into the accumulator.
  static float Merge(float acc, float row) { return acc + row; }
  static void Combine(float* __restrict y, const float* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
  }
  static float Finish(float acc, int64_t) { return acc; }
};
struct MeanRed : SumRed {
  static float Finish(float acc, int64_t count) {
    return count > 0 ? acc * (1.0f / static_cast<float>(count)) : 0.0f;
  }
};
struct L2Red : SumRed {
  static float Row(const float* x, int64_t n) {
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += x[i + j] * x[i + j];
    }
    float sum = 0.0f;
    for (; i < n; ++i) sum += x[i] * x[i];
    for (int j = 0; j < 8; ++j) sum += acc[j];
    return sum;
  }
  static void Combine(float* __restrict y, const float* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i] * x[i];
  }
  static float Finish(float acc, int64_t) { return sqrtf(acc); }
};
// Max and Min propagate NaN, as torch.amax does.
template <bool kMax>
struct ExtremeRed {
  static constexpr float kInit = kMax ? -INFINITY : INFINITY;
  static float Merge(float acc, float v) {
    return ((kMax ? v > acc : v < acc) || v != v) ? v : acc;
  }
  static float Row(const float* x, int64_t n) {
    float acc = kInit;
    for (int64_t i = 0; i < n; ++i) acc = Merge(acc, x[i]);
    return acc;
  }
  static void Combine(float* __restrict y, const float* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = Merge(y[i], x[i]);
  }
  static float Finish(float acc, int64_t) { return acc; }
};

template <typename R>
Status ReduceEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  uint32_t mask;
  BATON_RETURN_IF_ERROR(ReducedAxes(call, &mask));
  // Collapsed dims: size, whether reduced, output stride (0 when reduced).
  int64_t size[kMaxRank + 1];
  bool red[kMaxRank + 1];
  uint32_t n = 0;
  int64_t count = 1;
  for (uint32_t i = 0; i < tx.rank(); ++i) {
    const bool r = (mask >> i) & 1u;
    if (r) count *= tx.dim(i);
    if (tx.dim(i) == 1) continue;
    if (n > 0 && red[n - 1] == r) {
      size[n - 1] *= tx.dim(i);
    } else {
      size[n] = tx.dim(i);
      red[n] = r;
      ++n;
    }
  }
  if (n == 0) {
    size[0] = 1;
    red[0] = false;
    n = 1;
  }
  int64_t ostride[kMaxRank + 1];
  int64_t run = 1;
  for (int32_t d = static_cast<int32_t>(n) - 1; d >= 0; --d) {
    ostride[d] = red[d] ? 0 : run;
    if (!red[d]) run *= size[d];
  }
  const float* x = tx.f32();
  float* y = call.outputs[0].f32();
  const int64_t out_elems = call.outputs[0].elements();
  for (int64_t i = 0; i < out_elems; ++i) y[i] = R::kInit;
  if (tx.elements() == 0) {
    for (int64_t i = 0; i < out_elems; ++i) y[i] = R::Finish(y[i], count);
    return Status::Ok();
  }

  const uint32_t inner = n - 1;
  const int64_t len = size[inner];
  int64_t rows = 1;
  for (uint32_t d = 0; d < inner; ++d) rows *= size[d];
  int64_t index[kMaxRank + 1] = {};
  int64_t o = 0;
  for (int64_t t = 0; t < rows; ++t) {
    const float* xr = x + t * len;
    if (red[inner]) {
      y[o] = R::Merge(y[o], R::Row(xr, len));
    } else {
      R::Combine(y + o, xr, len);
    }
    for (int32_t d = static_cast<int32_t>(inner) - 1; d >= 0; --d) {
      o += ostride[d];
      if (++index[d] < size[d]) break;
      o -= ostride[d] * size[d];
      index[d] = 0;
    }
  }
  for (int64_t i = 0; i < out_elems; ++i) y[i] = R::Finish(y[i], count);
  return Status::Ok();
}

// The single axis of ArgMax/ArgMin/TopK and the extents around it.
struct AxisWalk {
  int64_t outer, len, inner;
};

AxisWalk WalkOf(const TensorArg& x, uint32_t axis) {
  return AxisWalk{DimProduct(x, 0, axis), x.dim(axis), DimProduct(x, axis + 1, x.rank())};
}

// ArgMax/ArgMin: ReduceParams with exactly one axis; int64 output with the
// axis kept (size 1) or removed.
Status ArgPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(x.dtype() == DType::Float32, "ArgMax/ArgMin input must be float32");
  BATON_KCHECK(y.dtype() == DType::Int64, "ArgMax/ArgMin output must be int64");
  BATON_RETURN_IF_ERROR(CheckRank(x));
  const schema::ReduceParams* p = call.node->params_as_ReduceParams();
  BATON_KCHECK(p != nullptr && p->axes() != nullptr && p->axes()->size() == 1,
               "ArgMax/ArgMin needs ReduceParams with one axis");
  BATON_KCHECK(x.rank() >= 1, "ArgMax/ArgMin input must have rank >= 1");
  BATON_RETURN_IF_ERROR(CheckReducedShape(call));
  BATON_KCHECK(x.dim(static_cast<uint32_t>(p->axes()->Get(0))) > 0,
               "ArgMax/ArgMin axis must not be empty");
  return Status::Ok();
}

template <bool kMax>
Status ArgEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const uint32_t axis = static_cast<uint32_t>(call.node->params_as_ReduceParams()->axes()->Get(0));
  const AxisWalk w = WalkOf(tx, axis);
  const float* x = tx.f32();
  int64_t* y = static_cast<int64_t*>(call.outputs[0].data);
  for (int64_t o = 0; o < w.outer; ++o) {
    for (int64_t i = 0; i < w.inner; ++i) {
      const float* xs = x + o * w.len * w.inner + i;
      float best = xs[0];
      int64_t at = 0;
      for (int64_t a = 1; a < w.len; ++a) {
        const float v = xs[a * w.inner];
        // The first NaN wins, as in torch; otherwise the first extreme.
        if (best != best) break;
        if ((kMax ? v > best : v < best) || v != v) {
          best = v;
          at = a;
        }
      }
      y[o * w.inner + i] = at;
    }
  }
  return Status::Ok();
}

// TopK: values (float32) and indices (int64), both of x's shape except k
// along the axis.
Status TopKPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 2));
  const TensorArg& x = call.inputs[0];
  const TensorArg& v = call.outputs[0];
  const TensorArg& ix = call.outputs[1];
  BATON_KCHECK(x.dtype() == DType::Float32 && v.dtype() == DType::Float32,
               "TopK values must be float32");
  BATON_KCHECK(ix.dtype() == DType::Int64, "TopK indices must be int64");
  BATON_RETURN_IF_ERROR(CheckRank(x));
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(p != nullptr, "TopK needs AxisParams");
  BATON_KCHECK(p->axis() >= 0 && static_cast<uint32_t>(p->axis()) < x.rank(),
               "TopK axis out of range");
  BATON_KCHECK(SameShape(v, ix) && v.rank() == x.rank(), "TopK output shapes mismatch");
  const uint32_t axis = static_cast<uint32_t>(p->axis());
  for (uint32_t d = 0; d < x.rank(); ++d) {
    BATON_KCHECK(d == axis ? v.dim(d) <= x.dim(d) : v.dim(d) == x.dim(d),
                 "TopK output shape mismatch");
  }
  return Status::Ok();
}

// Keeps the best k of each slice sorted in the outputs themselves (insertion:
// O(len * k), no scratch): an element moves ahead only of strictly worse ones,
// so equal values keep index order.
Status TopKEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const uint32_t axis = static_cast<uint32_t>(call.node->params_as_AxisParams()->axis());
  const AxisWalk w = WalkOf(tx, axis);
  const int64_t k = call.outputs[0].dim(axis);
  const float* x = tx.f32();
  float* vals = call.outputs[0].f32();
  int64_t* idx = static_cast<int64_t*>(call.outputs[1].data);
  if (k == 0) return Status::Ok();
  for (int64_t o = 0; o < w.outer; ++o) {
    for (int64_t i = 0; i < w.inner; ++i) {
      const float* xs = x + o * w.len * w.inner + i;
      float* vs = vals + o * k * w.inner + i;
      int64_t* is = idx + o * k * w.inner + i;
      int64_t filled = 0;
      for (int64_t a = 0; a < w.len; ++a) {
        const float v = xs[a * w.inner];
        // Position: after every kept element that is at least as good.
        int64_t pos = filled;
        while (pos > 0) {
          const float u = vs[(pos - 1) * w.inner];
          if (!(v > u)) break;
          --pos;
        }
        if (pos >= k) continue;
        const int64_t last = filled < k ? filled : k - 1;
        for (int64_t j = last; j > pos; --j) {
          vs[j * w.inner] = vs[(j - 1) * w.inner];
          is[j * w.inner] = is[(j - 1) * w.inner];
        }
        vs[pos * w.inner] = v;
        is[pos * w.inner] = a;
        if (filled < k) ++filled;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kReduceEntries[] = {
    {Op::ReduceMean, kAllDeviceKinds, ReducePrepare, ReduceEval<MeanRed>, nullptr},
    {Op::ReduceSum, kAllDeviceKinds, ReducePrepare, ReduceEval<SumRed>, nullptr},
    {Op::ReduceMax, kAllDeviceKinds, ReducePrepare, ReduceEval<ExtremeRed<true>>, nullptr},
    {Op::ReduceMin, kAllDeviceKinds, ReducePrepare, ReduceEval<ExtremeRed<false>>, nullptr},
    {Op::ReduceL2, kAllDeviceKinds, ReducePrepare, ReduceEval<L2Red>, nullptr},
    {Op::ArgMax, kAllDeviceKinds, ArgPrepare, ArgEval<true>, nullptr},
    {Op::ArgMin, kAllDeviceKinds, ArgPrepare, ArgEval<false>, nullptr},
    {Op::TopK, kAllDeviceKinds, TopKPrepare, TopKEval, nullptr},
};
BATON_KERNEL_FAMILY(Reduce, kReduceEntries);

}  // namespace kernels
}  // namespace baton
