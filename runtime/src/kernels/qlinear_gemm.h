#pragma once
// The integer GEMM and requantization QLinearConv and QLinearMatMul
// (qlinear.cc) share. Internal to baton_kernels.
//
//   acc[m][p] = dot(w row m, column p) - wz[m] * sum(column p) + bias[m]
//             = sum_k (w[m][k] - wz[m]) * (x[k][p] - xz) + bias[m]
//
// over a block of columns held as int16 (x - xz), contiguous in k, with
// their sums; the weight rows are 8-bit and read in place. The dot products
// are gemm_core.h's QDot (a 2 x 4 tile, compiled per ISA: pmaddwd, vpmaddwd
// with AVX2; exact). Then MlasRequantizeOutput's arithmetic
// (RequantizeChunk). QLinearMatMul and convolutions with a large reduction
// use these blocks; the other convolutions qlinear.cc's pair layout.
//
// One code path serves uint8 and int8 alike (code size on microcontrollers):
// 8-bit data is read as bytes with int8's sign bit flipped, b ^ 0x80 =
// v + 128, so that v - z = (b ^ flip) - (z + 128) with both terms in
// [0, 255]; the output byte is the result's two's complement.
//
// Overflow: every term is at most 255 * 255 in magnitude, and reductions
// are at most kMaxReduction long, so no partial sum leaves int32. The bias
// add wraps (as ONNX Runtime's int32 add does), without UB.
//
//   workspace: [ columns: int16 [P][K] ][ column sums: int32 [P] ]

#include <stddef.h>
#include <stdint.h>

#include "kernel_util.h"

namespace baton {
namespace kernels {

// Largest reduction size K for which 255 * 255 * K fits in int32.
inline constexpr int64_t kMaxReduction = 33025;
static_assert(int64_t{255} * 255 * kMaxReduction <= INT32_MAX, "int32 accumulator bound");
static_assert(int64_t{255} * 255 * (kMaxReduction + 1) > INT32_MAX, "the largest such K");

// Workspace bytes a block of columns (and QLinearMatMul's packed b rows)
// aims at: an L2 share. A constant, so that the planner (which calls
// WorkspaceBytes on the host) and the device agree.
inline constexpr int64_t kQBlockBytes = 64 * 1024;

// Outputs requantized at a time (int32 accumulators on the stack).
inline constexpr int64_t kQChunk = 64;

// The flip that maps an 8-bit dtype's bytes onto [0, 255] in order.
inline uint8_t FlipOf(DType t) { return t == DType::Int8 ? 0x80 : 0; }

// Element i of 8-bit data as its value + 128 (int8, flip 0x80) or its value
// (uint8, flip 0).
inline int32_t UnsignedAt(const void* p, int64_t i, uint8_t flip) {
  return static_cast<const uint8_t*>(p)[i] ^ flip;
}

// The channel side: weight rows (bytes, row i at w + i * ldw) and
// per-channel parameters, indexed from channel c0.
struct QChannels {
  const uint8_t* w = nullptr;
  int64_t ldw = 0;
  uint8_t flip = 0;  // w's dtype (FlipOf)
  const void* zero = nullptr;
  const float* scale = nullptr;
  const int32_t* bias = nullptr;  // null when absent
  int64_t zero_step = 0;          // 0: per tensor, 1: per channel
  int64_t scale_step = 0;
  int64_t c0 = 0;
  int64_t count = 0;
};

// The column side: `count` columns of k int16 (x - xz) values and their sums.
struct QColumns {
  int16_t* data = nullptr;
  int32_t* sums = nullptr;
  int64_t k = 0;
  int64_t count = 0;
};

// Output element (channel i, column j) of a block at y + i * ld_channel +
// j * ld_column, and its requantization.
struct QOutput {
  uint8_t* y = nullptr;
  int64_t ld_channel = 0, ld_column = 0;
  float x_scale = 1.0f, y_scale = 1.0f;
  float lo = 0.0f, hi = 0.0f;  // v's range, in output LSBs around the zero point
  int32_t zero = 0;
};

// x (input 0) as bytes, and its zero point (input 2) in the same domain.
struct QActivation {
  const uint8_t* data = nullptr;
  uint8_t flip = 0;
  int32_t zero = 0;
};

// The ONNX inputs 0..8 of a QLinear node (x, x_scale, x_zero_point, w,
// w_scale, w_zero_point, y_scale, y_zero_point, bias) at eval:
QActivation QActivationOf(const KernelCall& call);
// `channels` outputs with weight rows from `w` (row stride ldw bytes).
QChannels QChannelsOf(const KernelCall& call, const void* w, int64_t ldw, int64_t channels);
// The output, its range and the fused clamp (in real units; NaN: no bound).
QOutput QOutputOf(const KernelCall& call, const Clamp& clamp);

// ONNX Runtime's requantization scale: (x_scale * w_scale) / y_scale.
inline float ChannelScale(const QOutput& o, const QChannels& ch, int64_t c) {
  return (o.x_scale * ch.scale[c * ch.scale_step]) / o.y_scale;
}

// w's zero point for channel c, + 128 for int8 (as the weight bytes are read).
inline int32_t ChannelZero(const QChannels& ch, int64_t c) {
  return UnsignedAt(ch.zero, c * ch.zero_step, ch.flip);
}

// Requantizes n <= kQChunk outputs: y[index + j * stride] from acc[j] minus
// wz * sums[j] (sums may be null) plus bias (wrapping):
//   round_half_even(clamp(float(acc) * scale, lo, hi)) + zero.
void RequantizeChunk(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, ptrdiff_t n,
                     float scale, const QOutput& o, int64_t index, int64_t stride);

// Every output of a block: channels ch x columns cols.
void QGemmBlock(const QChannels& ch, const QColumns& cols, const QOutput& o);

// Columns per block for reduction size k (at least 4, at most `total`).
int64_t QColumnsPerBlock(int64_t k, int64_t total);
// Workspace bytes of p columns of k values and their sums.
size_t QColumnBytes(int64_t p, int64_t k);
// The columns' storage at the start of the workspace `ws` (8-aligned).
QColumns QColumnsIn(void* ws, int64_t p, int64_t k);

}  // namespace kernels
}  // namespace baton
