// MatMul with numpy batch broadcasting.

#include <algorithm>
#include <memory>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferMatMul(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_TRY(c.RequireMinRank(0, 1));
  BATON_TRY(c.RequireMinRank(1, 1));
  Shape a = c.S(0), b = c.S(1);
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a[a.size() - 1] != b[b.size() - 2]) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) + " differ");
  }
  Shape batch;
  if (!internal::BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                 &batch)) {
    return c.Err("batch dimensions of " + c.Desc(0) + " and " + c.Desc(1) +
                 " are not broadcastable");
  }
  if (!a_vec) batch.push_back(a[a.size() - 2]);
  if (!b_vec) batch.push_back(b.back());
  c.Output(DType::Float32, batch);
  return Check();
}

// QLinearMatMul (the planner's fusion of DequantizeLinear -> MatMul or Gemm
// [-> Relu/Clip] -> QuantizeLinear, docs/operators.md): ONNX's inputs a,
// a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point,
// plus Baton's optional int32 bias [N] (input 8). `b` is 2-D: [K, N], or
// [N, K] with transB = 1 (a fused Gemm's weight as written).
Check InferQLinearMatMul(InferContext& c) {
  BATON_TRY(CheckQLinearInputs(c, 0, 3, 6));
  BATON_TRY(c.RequireMinRank(0, 2));
  if (c.Rank(3) != 2) return c.Err("b " + c.Desc(3) + " must be 2-D");
  const bool trans_b = c.node().GetInt("transB", 0) != 0;
  const int64_t k = trans_b ? c.S(3)[1] : c.S(3)[0];
  const int64_t n = trans_b ? c.S(3)[0] : c.S(3)[1];
  if (c.S(0).back() != k) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(3) + " differ");
  }
  if (c.In(4).elements() != 1 && c.S(4) != Shape{n}) {
    return c.Err("b_scale " + c.Desc(4) + " must have 1 or " + std::to_string(n) + " elements");
  }
  if (c.Has(8)) {
    BATON_TRY(c.RequireDType(8, DType::Int32));
    if (c.S(8) != Shape{n}) {
      return c.Err("bias " + c.Desc(8) + " must have shape [" + std::to_string(n) + "]");
    }
  }
  Shape out = c.S(0);
  out.back() = n;
  c.Output(c.In(7).dtype, out);
  return Check();
}

// MatMulInteger (ONNX; runtime/src/kernels/qinteger.cc): a [..., M, K] and
// b [K, N] uint8 or int8, optional a_zero_point (1 or M elements, a's dtype)
// and b_zero_point (1 or N elements, b's dtype); y int32 [..., M, N].
Check InferMatMulInteger(InferContext& c) {
  for (int i : {0, 1}) {
    const DType d = c.In(i).dtype;
    if (d != DType::UInt8 && d != DType::Int8) {
      return c.Err(c.Desc(i) + " is " + DTypeName(d) + "; MatMulInteger takes uint8 or int8");
    }
  }
  if (c.Rank(0) < 2) return c.Err("a " + c.Desc(0) + " must have rank 2 or more");
  if (c.Rank(1) != 2) return c.Err("b " + c.Desc(1) + " must be 2-D (Baton supports no batched b)");
  const int64_t m = c.S(0)[c.Rank(0) - 2], n = c.S(1)[1];
  if (c.S(0).back() != c.S(1)[0]) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) + " differ");
  }
  for (int i : {2, 3}) {
    if (!c.Has(i)) continue;
    BATON_TRY(c.RequireDType(i, c.In(i - 2).dtype));
    const int64_t count = i == 2 ? m : n;
    if (c.In(i).elements() != 1 && c.S(i) != Shape{count}) {
      return c.Err("zero point " + c.Desc(i) + " must have 1 or " + std::to_string(count) +
                   " elements (per " + (i == 2 ? "row of a)" : "column of b)"));
    }
  }
  Shape out = c.S(0);
  out.back() = n;
  c.Output(DType::Int32, out);
  return Check();
}

// GemmParams: trans_b and the fused clamp.
Result<LoweredParams> LowerQLinearMatMul(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                         const Node& n) {
  const std::unique_ptr<schema::Clamp> clamp = internal::FusedClamp(n);
  LoweredParams out;
  out.type = schema::Params::GemmParams;
  out.offset = schema::CreateGemmParams(*b, 1.0f, 1.0f, false, n.GetInt("transB", 0) != 0,
                                        clamp.get())
                   .Union();
  return out;
}

// Output elements (batch * M * N) * K, K the last dim of A.
double MatMulMacs(const schema::Plan& plan, const schema::Node& node, double out_elements) {
  return out_elements * internal::PlanDim(internal::PlanInput(plan, node, 0), -1);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"MatMul", 2, 2, 1, 1, InferMatMul, true, schema::Op::MatMul, 2, nullptr, MatMulMacs, nullptr, false},
    {"MatMulInteger", 2, 4, 1, 1, InferMatMulInteger, true, schema::Op::MatMulInteger, kAllInputs, nullptr, MatMulMacs, nullptr, false},
    {"QLinearMatMul", 8, 9, 1, 1, InferQLinearMatMul, true, schema::Op::QLinearMatMul, kAllInputs, LowerQLinearMatMul, MatMulMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kMatmulOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
