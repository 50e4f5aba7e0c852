#pragma once
// Numpy multidirectional broadcasting of two operands to an output shape,
// with adjacent dimensions collapsed so that the innermost loop is as long as
// possible. Used by the binary elementwise kernels.

#include <stdint.h>

#include "kernel_util.h"

namespace baton {
namespace kernels {

struct Broadcast2 {
  uint32_t rank = 0;  // after collapsing; >= 1
  int64_t shape[kMaxRank] = {};
  int64_t sa[kMaxRank] = {};  // element strides of a (0 along broadcast dims)
  int64_t sb[kMaxRank] = {};
};

// Checks that a and b broadcast to exactly y's shape and fills `out`.
inline Status MakeBroadcast2(const TensorArg& a, const TensorArg& b, const TensorArg& y,
                             Broadcast2* out) {
  BATON_RETURN_IF_ERROR(CheckRank(a));
  BATON_RETURN_IF_ERROR(CheckRank(b));
  BATON_RETURN_IF_ERROR(CheckRank(y));
  const uint32_t r = y.rank();
  BATON_KCHECK(a.rank() <= r && b.rank() <= r, "operand rank exceeds output rank");
  int64_t shape[kMaxRank], sa[kMaxRank], sb[kMaxRank];
  int64_t run_a = 1, run_b = 1;
  for (int32_t d = static_cast<int32_t>(r) - 1; d >= 0; --d) {
    const int32_t off_a = d - static_cast<int32_t>(r - a.rank());
    const int32_t off_b = d - static_cast<int32_t>(r - b.rank());
    const int64_t da = off_a >= 0 ? a.dim(static_cast<uint32_t>(off_a)) : 1;
    const int64_t db = off_b >= 0 ? b.dim(static_cast<uint32_t>(off_b)) : 1;
    BATON_KCHECK(da == db || da == 1 || db == 1, "operands are not broadcastable");
    const int64_t dy = da == 1 ? db : da;
    BATON_KCHECK(y.dim(static_cast<uint32_t>(d)) == dy, "output shape is not the broadcast shape");
    shape[d] = dy;
    sa[d] = (da == 1) ? 0 : run_a;
    sb[d] = (db == 1) ? 0 : run_b;
    run_a *= da;
    run_b *= db;
  }
  // Collapse: drop size-1 dims, merge a dim into its inner neighbour when
  // both operands stay linear across the pair.
  Broadcast2 bc;
  uint32_t n = 0;
  for (uint32_t d = 0; d < r; ++d) {
    if (shape[d] == 1) continue;
    if (n > 0) {
      const uint32_t p = n - 1;
      // previous (outer) kept dim p, current (inner) d
      if (sa[p] == sa[d] * shape[d] && sb[p] == sb[d] * shape[d]) {
        // merge p into d: the merged dim takes d's strides
        bc.shape[p] *= shape[d];
        bc.sa[p] = sa[d];
        bc.sb[p] = sb[d];
        // keep the original strides of d for the next comparison
        sa[p] = sa[d];
        sb[p] = sb[d];
        shape[p] = bc.shape[p];
        continue;
      }
    }
    bc.shape[n] = shape[d];
    bc.sa[n] = sa[d];
    bc.sb[n] = sb[d];
    shape[n] = shape[d];
    sa[n] = sa[d];
    sb[n] = sb[d];
    ++n;
  }
  if (n == 0) {
    bc.shape[0] = 1;
    bc.sa[0] = 0;
    bc.sb[0] = 0;
    n = 1;
  }
  bc.rank = n;
  *out = bc;
  return Status::Ok();
}

// The rows of a Broadcast2 (every dim but the innermost), visited in order
// by the kernels: Rows(bc) of them; NextRow moves the operands' element
// offsets oa and ob (strides sa and sb, a Broadcast2's or swapped) from one
// row's start to the next, `index` (zeroed, kMaxRank) being the row.
inline int64_t Rows(const Broadcast2& bc) {
  int64_t rows = 1;
  for (uint32_t d = 0; d + 1 < bc.rank; ++d) rows *= bc.shape[d];
  return rows;
}

inline void NextRow(const Broadcast2& bc, const int64_t* sa, const int64_t* sb, int64_t* index,
                    int64_t* oa, int64_t* ob) {
  for (int32_t d = static_cast<int32_t>(bc.rank) - 2; d >= 0; --d) {
    *oa += sa[d];
    *ob += sb[d];
    if (++index[d] < bc.shape[d]) return;
    *oa -= sa[d] * bc.shape[d];
    *ob -= sb[d] * bc.shape[d];
    index[d] = 0;
  }
}

}  // namespace kernels
}  // namespace baton
