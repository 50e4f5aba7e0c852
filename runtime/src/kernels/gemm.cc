// Gemm: Y = act(clamp(alpha * A' * B' + beta * C)), C unidirectionally
// broadcast to [M, N], optional fused clamp and activation (GemmParams). Y is first filled with
// beta * C and the GEMM accumulates into it; alpha is folded into the packing of A.

#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_util.h"
#include "parallel.h"

namespace baton {
namespace kernels {
namespace {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
  Clamp clamp;
  int act = kActNone;
  float act_alpha = 0.0f, act_beta = 0.0f;
};

Status ParseGemm(const KernelCall& call, GemmShape* out) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 3, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(a.rank() == 2 && b.rank() == 2 && y.rank() == 2, "Gemm operands must be 2-D");
  GemmShape s;
  if (const schema::GemmParams* p = call.node->params_as_GemmParams()) {
    s.alpha = p->alpha();
    s.beta = p->beta();
    s.trans_a = p->trans_a();
    s.trans_b = p->trans_b();
    s.clamp = Clamp::From(p->clamp());
    s.act = static_cast<int>(p->activation());
    s.act_alpha = p->activation_alpha();
    s.act_beta = p->activation_beta();
    BATON_KCHECK(s.act <= static_cast<int>(schema::FusedActivation::MAX),
                 "Gemm activation is not a known FusedActivation");
  }
  s.m = s.trans_a ? a.dim(1) : a.dim(0);
  s.k = s.trans_a ? a.dim(0) : a.dim(1);
  const int64_t kb = s.trans_b ? b.dim(1) : b.dim(0);
  s.n = s.trans_b ? b.dim(0) : b.dim(1);
  BATON_KCHECK(s.k == kb, "Gemm inner dimensions differ");
  BATON_KCHECK(y.dim(0) == s.m && y.dim(1) == s.n, "Gemm output shape mismatch");
  const TensorArg& c = Input(call, 2);
  if (c.present()) {
    BATON_KCHECK(c.rank() <= 2, "Gemm C must have rank <= 2");
    if (c.rank() == 1) {
      BATON_KCHECK(c.dim(0) == s.n || c.dim(0) == 1, "Gemm C not broadcastable to [M, N]");
    } else if (c.rank() == 2) {
      BATON_KCHECK((c.dim(0) == s.m || c.dim(0) == 1) && (c.dim(1) == s.n || c.dim(1) == 1),
                   "Gemm C not broadcastable to [M, N]");
    }
  }
  *out = s;
  return Status::Ok();
}

// A single row (batch-1 classifiers) runs as a matrix-vector product.
size_t WorkspaceFor(const GemmShape& s) { return s.m == 1 ? 0 : GemmWorkspaceBytes(s.m, s.n, s.k); }

Status GemmPrepare(const KernelCall& call) {
  GemmShape s;
  BATON_RETURN_IF_ERROR(ParseGemm(call, &s));
  return CheckWorkspace(call, WorkspaceFor(s));
}

size_t GemmOpWorkspaceBytes(const KernelCall& call) {
  GemmShape s;
  if (!ParseGemm(call, &s).ok()) return 0;
  return WorkspaceFor(s);
}

Status GemmEval(const KernelCall& call) {
  GemmShape s;
  BATON_RETURN_IF_ERROR(ParseGemm(call, &s));
  const TensorArg& c = Input(call, 2);
  float* y = call.outputs[0].f32();
  GemmEpilogue epi;
  epi.clamp = s.clamp.enabled;
  epi.lo = s.clamp.lo;
  epi.hi = s.clamp.hi;
  epi.act = s.act;
  epi.act_alpha = s.act_alpha;
  epi.act_beta = s.act_beta;
  if (c.present() && s.beta != 0.0f) {
    // Strides of C seen as [M, N] (0 along broadcast axes).
    int64_t rs = 0, cs = 0;
    if (c.rank() == 1) {
      cs = c.dim(0) == 1 ? 0 : 1;
    } else if (c.rank() == 2) {
      rs = c.dim(0) == 1 ? 0 : c.dim(1);
      cs = c.dim(1) == 1 ? 0 : 1;
    }
    const float* cd = c.f32();
    for (int64_t i = 0; i < s.m; ++i) {
      float* row = y + i * s.n;
      const float* crow = cd + i * rs;
      for (int64_t j = 0; j < s.n; ++j) row[j] = s.beta * crow[j * cs];
    }
    epi.accumulate = true;
  }
  const float* a = call.inputs[0].f32();
  const StridedMatrix av = s.trans_a ? StridedMatrix{a, 1, s.m} : StridedMatrix{a, s.k, 1};
  const float* b = call.inputs[1].f32();
  const StridedMatrix bv = s.trans_b ? StridedMatrix{b, 1, s.k} : StridedMatrix{b, s.n, 1};
  if (s.m == 1) {
    Gemv(s.n, s.k, s.alpha, a, 1, bv, y, epi);  // A is [1, K] or [K, 1]: contiguous
  } else {
    GemmPackedSliced(s.m, s.n, s.k, s.alpha, av, PackBStrided, &bv, y, s.n, epi, WorkspaceF32(call),
                     ParallelWorkspaceSlices(WorkspaceSize(call), WorkspaceFor(s)));
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kGemmEntries[] = {
    {Op::Gemm, kAllDeviceKinds, GemmPrepare, GemmEval, GemmOpWorkspaceBytes},
};
BATON_KERNEL_FAMILY(Gemm, kGemmEntries);

}  // namespace kernels
}  // namespace baton
