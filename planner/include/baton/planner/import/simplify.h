#pragma once
// Graph simplification: the passes between import and device assignment.
// Each pass is a function over the IR, testable alone. Passes that need
// shapes expect InferShapes to have run; they keep every tensor's shape.
// Determinism: nodes keep their relative order, new tensors are appended in
// node order with names derived from existing ones, and unused tensors are
// dropped with the survivors keeping their relative order.
//
// Graph output names are stable across every pass: when the tensor feeding a
// removed node must survive as a graph output, its producer is rewired to
// write that output instead.

#include "baton/planner/graph.h"

namespace baton::planner {

// Removes Identity and Dropout nodes, rewiring consumers to the input. A
// Dropout whose mask output is consumed is an error. A node that cannot be
// removed without renaming a graph input, a constant or another graph output
// (e.g. y = Identity(x) with both graph tensors) is kept as Identity.
Check RemoveIdentities(Graph* graph);

// The most bytes one folded tensor may have (64 MiB): a model's numbers
// (ConstantOfShape's shape, Range's limits, Expand's shape) must not make the
// planner allocate without bound or bloat the plan's constants.
inline constexpr size_t kMaxFoldedBytes = size_t{64} << 20;

// Turns Constant nodes into constant tensors, and evaluates every node whose
// inputs are all constant (and Shape of any tensor with a known shape) with
// its OpDef's host evaluator, in topological order (so whole constant
// subgraphs fold in one pass): shape arithmetic on int64, int32 and bool
// (Shape, Gather, Concat, Equal, Where, Range, ConstantOfShape, Cast...),
// data movement and elementwise ops on constant data. Nodes whose outputs are
// graph outputs are kept. A node whose output would exceed kMaxFoldedBytes,
// or whose evaluation fails, is kept when it has a kernel and is an error
// naming it otherwise. Needs shapes.
Check FoldConstants(Graph* graph);

// Integer ops from a QDQ model's groups (issue 15, docs/operators.md):
// DequantizeLinear(x) -> Conv / MatMul / Gemm with a constant 8-bit weight
// (per tensor or per output channel) and an optional constant int32 bias of
// scale x_scale * w_scale [-> Relu | Clip] -> QuantizeLinear becomes one
// QLinearConv or QLinearMatMul reading the quantized tensors, with the
// activation as its clamp; DequantizeLinear(a) + DequantizeLinear(b)
// [-> Relu | Clip] -> QuantizeLinear of one 8-bit dtype becomes QLinearAdd. Runs before
// FoldConstants (which would dequantize the weights); folds everything else first, turns Casts to
// their input's dtype into Identity, and removes DequantizeLinear nodes left unread.
Check FuseQLinear(Graph* graph);

// After FoldConstants: one error naming every node left whose op has no
// kernel (ConstantOfShape, Range, Ceil, Floor, ReduceProd, Shape... are
// evaluated only at plan time), with the reason it did not fold.
Check CheckFoldOnlyOps(const Graph& graph);

// Replaces auto_pad on Conv, MaxPool and AveragePool with the equivalent
// explicit `pads` attribute. Needs shapes.
Check ResolveAutoPad(Graph* graph);

// Folds BatchNormalization into the Conv (or Gemm, when its bias is per
// output column) that produces its input, when that is exact: the producer's
// output has no other consumer and is not a graph output, the producer has
// no fused activation, and weights, bias and BN parameters are constants.
// The folded weights and bias are new constant tensors. Other BN nodes stay.
Check FoldBatchNorm(Graph* graph);

// Fuses Relu and Clip (constant bounds) into the Conv, Gemm or float Add
// that produces their input, setting Node::clamp, when the producer's output
// has no other consumer and is not a graph output.
Check FuseActivations(Graph* graph);

// Fuses a float32 Add(conv_out, other) into the Conv producing conv_out as
// its optional fourth input `sum` (y = clamp(conv(x) + bias + sum), the
// Add's clamp moving to the Conv; an absent bias stays an absent input 2),
// when conv_out has no other consumer and is not a graph output, the Conv
// has no clamp, activation or sum yet, both share the device annotation,
// and `other` has exactly conv_out's shape (no broadcast). The Conv takes
// the Add's output and its place in the node list. Run after
// FuseActivations, so that a Relu after the Add is in the Add's clamp.
Check FuseConvAdds(Graph* graph);

// Fuses HardSwish, Swish (alpha 1), HardSigmoid and Sigmoid into the
// float32 Conv or Gemm producing their input, setting Node::activation
// (applied after the node's clamp), when that input has no other consumer
// and is not a graph output, the producer has no activation yet and both
// share the device annotation. Run after FuseActivations and FuseConvAdds.
// The fused node keeps its op, so a target's op list places it as before.
Check FuseConvActivations(Graph* graph);

// Rewrites Mul(x, HardSigmoid(x)) with alpha = 1/6 and beta = 0.5 (how
// exporters spell hardswish before opset 14) as HardSwish(x), when the
// HardSigmoid output has no other consumer and is not a graph output. The
// Mul node keeps its name and output.
Check FuseHardSwish(Graph* graph);

// Rewrites the exact GELU as torch exports it at opsets 11-17,
// x * 0.5 * (1 + Erf(x / sqrt(2))), as Gelu(x): Div by sqrt(2) or Mul by
// 1/sqrt(2) (within 1e-6, the float rounding), Add of exactly 1, and the
// product of x, that sum and exactly 0.5 by two Muls in any grouping and
// operand order. Every intermediate must have no other consumer and not be
// a graph output; constants must be one-element float32 tensors of rank <= x's.
// The last Mul keeps its name and output.
Check FuseGelu(Graph* graph);

// Rewrites Mul(x, Tanh(Softplus(x))) (either operand order) as Mish(x), under
// the same sole-consumer conditions. The Mul keeps its name and output.
Check FuseMish(Graph* graph);

// Rewrites Mul(x, Sigmoid(x)) (either operand order) as Swish(x) (SiLU),
// under the same sole-consumer conditions. The Mul keeps its name and output.
Check FuseSwish(Graph* graph);

// Rewrites TopK with largest=0 as Neg, TopK (largest), Neg of the values: the
// plan's TopK always selects the largest. Exact (negation is exact), and
// equal values keep index order either way. The TopK keeps its name.
Check LowerSmallestTopK(Graph* graph);

// Replaces every Einsum node (its inputs' shapes known) by ReduceSum,
// Transpose, Reshape, MatMul or Mul nodes computing the same output
// (planner/src/ops/einsum.cc); the new tensors' shapes are left to
// InferShapes. Sets *lowered when any node was replaced. Rejects more than
// two operands and a label repeated within one operand, naming the node and
// the equation.
Check LowerEinsum(Graph* graph, bool* lowered);

// Drops tensors that no node, graph input or graph output references, and
// renumbers the rest (keeping their order).
void RemoveUnusedTensors(Graph* graph);

// Runs InferShapes, RemoveIdentities, FoldConstants, CheckFoldOnlyOps, ResolveAutoPad,
// FoldBatchNorm, FuseHardSwish, FuseGelu, FuseMish, FuseSwish, LowerSmallestTopK, FuseActivations,
// RemoveUnusedTensors, then
// InferShapes and Validate again.
Check Simplify(Graph* graph);

}  // namespace baton::planner
