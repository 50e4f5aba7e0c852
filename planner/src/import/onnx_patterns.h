#pragma once
// Rewrites of ONNX node patterns that run on the model itself, before the
// importer checks which ops Baton supports: a pattern may be made of ops that
// have no definition of their own. Internal to the ONNX importer.

#include <onnx/onnx_pb.h>

namespace baton::planner::internal {

// Replaces each LayerNorm that torch writes before opset 17,
//   m = ReduceMean(x, axes); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes)
//   y = Div(d, Sqrt(Add(v, eps))) [* gamma] [+ beta]
// (axes the trailing dims -k..-1, keepdims, the intermediates used only
// there, exponent exactly 2, eps, gamma and beta constants, gamma and beta of
// the normalized dims' shape) by one LayerNormalization(x, gamma, beta) with
// axis -k and epsilon eps (gamma a new constant of ones when absent). Shapes
// come from the model's value_info (ONNX's inference has run); a pattern
// whose shapes are unknown is left as written. Returns the number fused.
int FuseDecomposedLayerNorm(onnx::GraphProto* graph);

// Replaces each operator-form quantized node by its QDQ form (issue 15,
// docs/operators.md): DequantizeLinear of the quantized inputs, the float op,
// QuantizeLinear of the output with the node's output scale and zero point.
//   QLinearConv(x, xs, xz, w, ws, wz, ys, yz[, B]): w per output channel
//     (axis 0); B (int32) is dequantized with scale xs * ws, zero point 0.
//   QLinearMatMul(a, as, az, b, bs, bz, ys, yz): a per row, b per column.
//   com.microsoft QLinearAdd, QLinearMul (A, As, Az, B, Bs, Bz, Cs, Cz),
//   QLinearGlobalAveragePool (channels_last 0), QLinearSigmoid,
//   QLinearLeakyRelu (X, Xs, Xz, Ys, Yz), QLinearConcat (Ys, Yz, then
//   (X, Xs, Xz) per input), QLinearSoftmax (X, Xs, Xz, Ys, Yz; opset 13's
//   single axis, or axis -1 under either opset attribute).
// Node attributes carry over (Conv's window, LeakyRelu's alpha, Concat's
// axis); new tensors are named after the node. Returns the number lowered.
int LowerQLinearOps(onnx::GraphProto* graph);

}  // namespace baton::planner::internal
