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

}  // namespace baton::planner::internal
