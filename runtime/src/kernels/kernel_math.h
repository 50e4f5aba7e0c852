#pragma once
// Branch-free float math the kernels' loops vectorize (GCC, no intrinsics):
// exp of a non-positive or of a clamped argument, and sigmoid, Swish and tanh
// built on them. A file whose loops use them is built with -fno-trapping-math
// (runtime/CMakeLists.txt), so that the float selects if-convert. Internal to
// baton_kernels. The functions have internal linkage (static), so the per-ISA
// units (gemm/gemm_isa.inc) include this file too: each keeps its own copy,
// compiled for its instruction set.

#include <stdint.h>
#include <string.h>

// Marks a loop as carrying no dependence through memory (GCC's ivdep; clang
// has no such pragma and vectorizes on its own checks).
#if defined(__GNUC__) && !defined(__clang__)
#define BATON_IVDEP _Pragma("GCC ivdep")
#else
#define BATON_IVDEP
#endif

namespace baton {
namespace kernels {

// exp(t) for t in [-87.3, 88] (no NaN: converting it to int would be
// undefined), Cephes' expf: t = n ln2 + r, |r| <= ln2/2, exp(r) by a
// degree-6 polynomial (~1 ulp), times 2^n built in the exponent bits.
// Round-to-nearest by the 1.5 * 2^23 trick, which needs no libm call and
// survives without -ffast-math. Results for t in [-80, 87] (what the
// sigmoid rows clamp to) are normal floats: exp(-80) = 1.8e-35, exp(87) =
// 6.1e37, so 1 + e and 1 / (1 + e) are too.
static inline float ExpInRange(float t) {
  const float n = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = t - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

// exp(x) for x <= 0 (x - max). Below -87.3 the result is 0 (exp underflows to
// denormals there). A NaN (a NaN input, or inf - inf when a softmax row holds
// +inf) is returned as is, without reaching ExpInRange's conversion to int
// (the fuzzer found it).
static inline float ExpNonPositive(float in) {
  const bool nan = in != in;
  const bool tiny = in < -87.3f;
  const float e = ExpInRange((tiny || nan) ? -87.3f : in);
  return nan ? in : (tiny ? 0.0f : e);
}

// Floats SigmoidRow and SwishRow clamp at a time (on the stack).
constexpr int64_t kExpChunk = 64;

// t[j] = -x[j] clamped to [-80, 87], a NaN to 87 (so that ExpInRange's
// conversion to int stays defined), for j < n <= kExpChunk. Its own loop on
// purpose: written inline before the exp, GCC threads the clamp's branches,
// folds exp(87) and exp(-80) to constants and blends them in afterwards, so
// the vector exp runs on the unclamped lanes: efficientnet_b0 on AVX2 took
// 20 ms instead of 13 (denormal intermediates in those lanes are the likely
// cause; not proven).
static inline void NegClamped(const float* x, float* t, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float v = -x[j];
    const float c = v < 87.0f ? v : 87.0f;
    t[j] = c > -80.0f ? c : -80.0f;
  }
}

// y[j] = f(x[j], exp(-x[j]) with -x[j] clamped as NegClamped does) for
// j < n, in chunks of kExpChunk; y may be x.
template <typename F>
static inline void ExpNegRow(const float* x, float* y, int64_t n, F f) {
  float t[kExpChunk];
  for (int64_t j0 = 0; j0 < n; j0 += kExpChunk) {
    const int64_t m = n - j0 < kExpChunk ? n - j0 : kExpChunk;
    NegClamped(x + j0, t, m);
    for (int64_t j = 0; j < m; ++j) y[j0 + j] = f(x[j0 + j], ExpInRange(t[j]));
  }
}

// y[j] = 1 / (1 + exp(-x[j])) for j < n, about 1.2e-7 relative; a NaN stays
// NaN, and below -87 (where the clamped exp would give 1.65e-38 whatever x)
// it is 0, as exp underflows there. y may be x. One exp and one division, no
// select by sign: 1.4-1.6x the throughput of the earlier exp(-|x|) form
// (AVX-512 and AVX2, 94,080 floats in cache).
static inline void SigmoidRow(const float* x, float* y, int64_t n) {
  ExpNegRow(x, y, n, [](float v, float e) {
    const float s = 1.0f / (1.0f + e);
    return v != v ? v : (v < -87.0f ? 0.0f : s);
  });
}

// y[j] = x[j] * sigmoid(x[j]) (Swish, SiLU) as x / (1 + exp(-x)), about
// 1.5e-7 relative; y may be x. Below -87 the clamped exp would make it
// x / 6.1e37 (wrong for huge |x|), so it is x * 0 there: -0, or NaN for -inf
// (as x * sigmoid(x) gives).
static inline void SwishRow(const float* x, float* y, int64_t n) {
  ExpNegRow(x, y, n, [](float v, float e) {
    const float s = v / (1.0f + e);
    return v >= -87.0f ? s : v * 0.0f;
  });
}

// tanh, Cephes' tanhf: an odd polynomial below |x| = 0.625 (no cancellation
// near 0), (1 - e) / (1 + e) with e = exp(-2|x|) above.
static inline float TanhF(float x) {
  const float a = x < 0.0f ? -x : x;
  const float s = x * x;
  const float small =
      ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s +
        1.33314422036e-1f) * s - 3.33332819422e-1f) * s * x + x;
  const float e = ExpNonPositive(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  return a < 0.625f ? small : (x < 0.0f ? -big : big);
}

}  // namespace kernels
}  // namespace baton
