#pragma once
// One definition per operator: everything the planner knows about an op
// lives in its OpDef, in one file per op family under planner/src/ops/.
//
//   import  ─ arity, shape and dtype inference     (OpDef::infer)
//   fold    ─ host evaluation of constant nodes    (OpDef::eval)
//   emit    ─ the plan's op, kernel inputs, params (OpDef::kernel_op,
//                                                   kernel_inputs, lower)
//   analyze ─ multiply-accumulates for the cost model (OpDef::macs)
//
// The passes never switch on op names for these questions; they ask FindOp.
// Adding an op to an existing family is one row in that family's table plus
// its functions; a new family adds one line to the list in ops/registry.cc.
// docs/architecture.md walks through an example. Host only; may allocate.

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/graph.h"

namespace baton::planner {

class InferContext;  // planner/src/ops/infer_context.h

// The normalized parameters a node carries in the plan (a schema::Params
// union member), built into the plan's FlatBufferBuilder.
struct LoweredParams {
  schema::Params type = schema::Params::NONE;
  flatbuffers::Offset<void> offset;
};

// Checks the node's inputs and attributes and records one output spec per
// output (InferContext::Output). Errors name the node.
using InferFn = Check (*)(InferContext& context);
// Builds the node's plan parameters. Errors name the node.
using LowerFn = Result<LoweredParams> (*)(flatbuffers::FlatBufferBuilder* builder,
                                          const Graph& graph, const Node& node);
// Computes every output's data from the input values. `inputs[i]` is the
// value of input i (nullptr when absent or unknown); the outputs carry their
// inferred dtype and shape. Called through internal::EvaluateNode, which has
// checked that input 0 and output 0 exist and, unless
// eval_reads_shapes_only, that input 0's data is complete. Errors are
// messages without the node prefix.
using EvalFn = Check (*)(const Node& node, const std::vector<const Tensor*>& inputs,
                         const std::vector<Tensor*>& outputs);
// Multiply-accumulates of one execution of a planned node whose first
// output has `out_elements` elements.
using MacsFn = double (*)(const schema::Plan& plan, const schema::Node& node,
                          double out_elements);

// Arity bound meaning "any number".
inline constexpr int kUnbounded = -1;
// OpDef::kernel_inputs value meaning "all of the node's inputs".
inline constexpr int kAllInputs = -1;

struct OpDef {
  const char* name;  // ONNX op type, or "__copy"
  int min_inputs;
  int max_inputs;    // kUnbounded: no upper bound
  int min_outputs;
  int max_outputs;   // kUnbounded: no upper bound
  // Shape and dtype inference. Null only for Constant, whose value the
  // shape pass reads from its attributes itself.
  InferFn infer;
  // Runtime side. Ops without a kernel (Shape, Constant, Dropout) must be
  // folded or removed before emission.
  bool has_kernel;
  schema::Op kernel_op;
  int kernel_inputs;  // leading node inputs the kernel reads; kAllInputs: all
  LowerFn lower;      // null: the node carries no parameters
  MacsFn macs;        // null: one multiply-accumulate per output element
  // Host evaluation for constant folding and shape propagation; null when
  // the planner cannot evaluate the op.
  EvalFn eval;
  // Shape propagation may evaluate the node when only the input shapes are
  // known, not their values (Shape).
  bool eval_reads_shapes_only;
};

// The definition of ONNX op type `op` (or "__copy"); null when Baton does
// not know the op.
const OpDef* FindOp(const std::string& op);
// The definition whose kernel is `op`; null for none.
const OpDef* FindOp(schema::Op op);
// Every definition, in the order of the family list (for docs and tests).
std::vector<const OpDef*> AllOps();

}  // namespace baton::planner
