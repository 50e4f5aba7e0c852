// MatMul with numpy semantics: 1-D operands are promoted (and the added axis
// dropped from the output), batch dimensions broadcast. When B has a single
// matrix, A's batch folds into the GEMM's M dimension.

#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_util.h"
#include "parallel.h"

namespace baton {
namespace kernels {
namespace {

struct MatMulShape {
  int64_t m = 1, n = 1, k = 1;
  uint32_t batch_rank = 0;          // output batch dims
  int64_t batch[kMaxRank] = {};     // output batch dims
  int64_t a_stride[kMaxRank] = {};  // per output batch dim, in elements (0: broadcast)
  int64_t b_stride[kMaxRank] = {};
  int64_t batch_count = 1;
  bool fold_a_batch = false;  // B is one matrix: run A's batch as extra rows
};

Status ParseMatMul(const KernelCall& call, MatMulShape* out) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(a));
  BATON_RETURN_IF_ERROR(CheckRank(b));
  BATON_RETURN_IF_ERROR(CheckRank(y));
  const uint32_t ra = a.rank(), rb = b.rank();
  BATON_KCHECK(ra >= 1 && rb >= 1, "MatMul operands must have rank >= 1");
  MatMulShape s;
  s.m = ra == 1 ? 1 : a.dim(ra - 2);
  s.k = a.dim(ra - 1);
  const int64_t kb = rb == 1 ? b.dim(0) : b.dim(rb - 2);
  s.n = rb == 1 ? 1 : b.dim(rb - 1);
  BATON_KCHECK(s.k == kb, "MatMul inner dimensions differ");
  const uint32_t ba = ra > 2 ? ra - 2 : 0;
  const uint32_t bb = rb > 2 ? rb - 2 : 0;
  s.batch_rank = ba > bb ? ba : bb;
  const uint32_t expect_rank = s.batch_rank + (ra > 1 ? 1 : 0) + (rb > 1 ? 1 : 0);
  BATON_KCHECK(y.rank() == expect_rank, "MatMul output rank mismatch");
  int64_t sa = s.m * s.k, sb = s.k * s.n;  // running strides, innermost batch dim first
  bool b_single = true;
  for (uint32_t i = 0; i < s.batch_rank; ++i) {
    const uint32_t d = s.batch_rank - 1 - i;  // output batch dim, from the right
    const int64_t da = i < ba ? a.dim(ba - 1 - i) : 1;
    const int64_t db = i < bb ? b.dim(bb - 1 - i) : 1;
    BATON_KCHECK(da == db || da == 1 || db == 1, "MatMul batch dims not broadcastable");
    const int64_t dim = da > db ? da : db;
    s.batch[d] = (da == 0 || db == 0) ? 0 : dim;
    s.a_stride[d] = da == 1 ? 0 : sa;
    s.b_stride[d] = db == 1 ? 0 : sb;
    if (db != 1) b_single = false;
    sa *= da;
    sb *= db;
    BATON_KCHECK(y.dim(d) == s.batch[d], "MatMul output batch shape mismatch");
    s.batch_count *= s.batch[d];
  }
  if (ra > 1) BATON_KCHECK(y.dim(s.batch_rank) == s.m, "MatMul output M mismatch");
  if (rb > 1) BATON_KCHECK(y.dim(y.rank() - 1) == s.n, "MatMul output N mismatch");
  // A's batch can be folded into M when B is shared by every batch item and
  // A is not broadcast (then A's batch is contiguous rows).
  bool a_full = true;
  for (uint32_t d = 0; d < s.batch_rank; ++d) {
    if (s.a_stride[d] == 0 && s.batch[d] != 1) a_full = false;
  }
  s.fold_a_batch = b_single && a_full && s.batch_count > 1;
  *out = s;
  return Status::Ok();
}

int64_t GemmRows(const MatMulShape& s) { return s.fold_a_batch ? s.m * s.batch_count : s.m; }

// Single rows run as matrix-vector products, without workspace.
size_t WorkspaceFor(const MatMulShape& s) {
  if (s.batch_count == 0 || GemmRows(s) == 1) return 0;
  return GemmWorkspaceBytes(GemmRows(s), s.n, s.k);
}

Status MatMulPrepare(const KernelCall& call) {
  MatMulShape s;
  BATON_RETURN_IF_ERROR(ParseMatMul(call, &s));
  return CheckWorkspace(call, WorkspaceFor(s));
}

size_t MatMulWorkspaceBytes(const KernelCall& call) {
  MatMulShape s;
  if (!ParseMatMul(call, &s).ok()) return 0;
  return WorkspaceFor(s);
}

Status MatMulEval(const KernelCall& call) {
  MatMulShape s;
  BATON_RETURN_IF_ERROR(ParseMatMul(call, &s));
  if (s.batch_count == 0) return Status::Ok();
  const float* a = call.inputs[0].f32();
  const float* b = call.inputs[1].f32();
  float* y = call.outputs[0].f32();
  float* ws = WorkspaceF32(call);
  const int slices = ParallelWorkspaceSlices(WorkspaceSize(call), WorkspaceFor(s));
  const GemmEpilogue epi;
  if (s.fold_a_batch) {
    const StridedMatrix bv{b, s.n, 1};
    GemmPackedSliced(GemmRows(s), s.n, s.k, 1.0f, StridedMatrix{a, s.k, 1}, PackBStrided, &bv, y,
                     s.n, epi, ws, slices);
    return Status::Ok();
  }
  int64_t index[kMaxRank] = {};
  for (int64_t t = 0; t < s.batch_count; ++t) {
    int64_t oa = 0, ob = 0;
    for (uint32_t d = 0; d < s.batch_rank; ++d) {
      oa += index[d] * s.a_stride[d];
      ob += index[d] * s.b_stride[d];
    }
    const StridedMatrix bv{b + ob, s.n, 1};
    if (s.m == 1) {
      Gemv(s.n, s.k, 1.0f, a + oa, 1, bv, y + t * s.n, epi);
    } else {
      GemmPackedSliced(s.m, s.n, s.k, 1.0f, StridedMatrix{a + oa, s.k, 1}, PackBStrided, &bv,
                       y + t * s.m * s.n, s.n, epi, ws, slices);
    }
    for (int32_t d = static_cast<int32_t>(s.batch_rank) - 1; d >= 0; --d) {
      if (++index[d] < s.batch[d]) break;
      index[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kMatMulEntries[] = {
    {Op::MatMul, kAllDeviceKinds, MatMulPrepare, MatMulEval, MatMulWorkspaceBytes},
};
BATON_KERNEL_FAMILY(MatMul, kMatMulEntries);

}  // namespace kernels
}  // namespace baton
