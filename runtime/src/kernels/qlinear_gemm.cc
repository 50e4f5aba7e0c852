// The integer GEMM and requantization of the QLinear family
// (qlinear_gemm.h).

#include "qlinear_gemm.h"

#include "gemm_core.h"

namespace baton {
namespace kernels {
namespace {

constexpr int64_t kMinColumns = 4;  // the dot kernel's width

// Weight rows per QDot call (their sums stay on the stack).
constexpr int64_t kQRows = 4;

static_assert(kQChunk <= kQRequantizeMax, "QRequantize takes a chunk at a time");

inline int64_t Align8(int64_t bytes) { return (bytes + 7) & ~int64_t{7}; }

inline float Within(float v, float lo, float hi) {
  v = v > lo ? v : lo;  // NaN -> lo
  return v < hi ? v : hi;
}

// A fused clamp bound in output LSBs, kept inside [lo, hi]; NaN is no bound
// (`fallback`), as for the float kernels' clamp.
inline float ClampBound(float v, float lo, float hi, float fallback) {
  return v == v ? Within(v, lo, hi) : fallback;
}

template <bool kSums>
void Requantize(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, ptrdiff_t n,
                float scale, const QOutput& o, int64_t index, int64_t stride) {
  QRequantize(acc, kSums ? sums : nullptr, wz, bias, n, scale, o.lo, o.hi, o.zero, o.y + index,
              stride);
}

}  // namespace

QActivation QActivationOf(const KernelCall& call) {
  QActivation a;
  a.flip = FlipOf(call.inputs[0].dtype());
  a.data = static_cast<const uint8_t*>(call.inputs[0].data);
  a.zero = UnsignedAt(call.inputs[2].data, 0, a.flip);
  return a;
}

QChannels QChannelsOf(const KernelCall& call, const void* w, int64_t ldw, int64_t channels) {
  QChannels ch;
  ch.w = static_cast<const uint8_t*>(w);
  ch.ldw = ldw;
  ch.flip = FlipOf(call.inputs[3].dtype());
  ch.scale = call.inputs[4].f32();
  ch.scale_step = call.inputs[4].elements() == 1 ? 0 : 1;
  ch.zero = call.inputs[5].data;
  ch.zero_step = call.inputs[5].elements() == 1 ? 0 : 1;
  const TensorArg& b = Input(call, 8);
  ch.bias = b.present() ? static_cast<const int32_t*>(b.data) : nullptr;
  ch.count = channels;
  return ch;
}

QOutput QOutputOf(const KernelCall& call, const Clamp& clamp) {
  QOutput o;
  const DType type = call.outputs[0].dtype();
  const bool is_signed = type == DType::Int8;
  o.y = static_cast<uint8_t*>(call.outputs[0].data);
  o.x_scale = call.inputs[1].f32()[0];
  o.y_scale = call.inputs[6].f32()[0];
  o.zero = UnsignedAt(call.inputs[7].data, 0, FlipOf(type)) - (is_signed ? 128 : 0);
  const float qlo = static_cast<float>((is_signed ? -128 : 0) - o.zero);
  const float qhi = static_cast<float>((is_signed ? 127 : 255) - o.zero);
  o.lo = qlo;
  o.hi = qhi;
  if (clamp.enabled) {
    o.lo = ClampBound(clamp.lo / o.y_scale, qlo, qhi, qlo);
    o.hi = ClampBound(clamp.hi / o.y_scale, qlo, qhi, qhi);
  }
  return o;
}

void RequantizeChunk(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, ptrdiff_t n,
                     float scale, const QOutput& o, int64_t index, int64_t stride) {
  if (sums != nullptr) {
    Requantize<true>(acc, sums, wz, bias, n, scale, o, index, stride);
  } else {
    Requantize<false>(acc, nullptr, 0, bias, n, scale, o, index, stride);
  }
}

void QGemmBlock(const QChannels& ch, const QColumns& cols, const QOutput& o) {
  int32_t acc[kQRows][kQChunk];
  for (int64_t i0 = 0; i0 < ch.count; i0 += kQRows) {
    const int64_t rows = ch.count - i0 < kQRows ? ch.count - i0 : kQRows;
    for (int64_t j0 = 0; j0 < cols.count; j0 += kQChunk) {
      const int64_t n = cols.count - j0 < kQChunk ? cols.count - j0 : kQChunk;
      QDot(ch.w + i0 * ch.ldw, ch.ldw, ch.flip, rows, cols.data + j0 * cols.k, n, cols.k, acc[0],
           kQChunk);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t c = ch.c0 + i0 + r;
        const int32_t bias = ch.bias != nullptr ? ch.bias[c] : 0;
        Requantize<true>(acc[r], cols.sums + j0, ChannelZero(ch, c), bias,
                         static_cast<ptrdiff_t>(n), ChannelScale(o, ch, c), o,
                         (i0 + r) * o.ld_channel + j0 * o.ld_column, o.ld_column);
      }
    }
  }
}

int64_t QColumnsPerBlock(int64_t k, int64_t total) {
  int64_t p = kQBlockBytes / (2 * (k > 0 ? k : 1) + 4);
  p = p < kMinColumns ? kMinColumns : p;
  return p < total ? p : total;
}

size_t QColumnBytes(int64_t p, int64_t k) {
  return static_cast<size_t>(Align8(p * k * 2) + Align8(p * 4));
}

QColumns QColumnsIn(void* ws, int64_t p, int64_t k) {
  auto* base = static_cast<unsigned char*>(ws);
  QColumns cols;
  cols.data = reinterpret_cast<int16_t*>(base);
  cols.sums = reinterpret_cast<int32_t*>(base + Align8(p * k * 2));
  cols.k = k;
  return cols;
}

}  // namespace kernels
}  // namespace baton
