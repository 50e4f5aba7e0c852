// LSTM and GRU (ONNX, layout 0): forward, reverse and bidirectional, with
// the default activations, optional bias, initial states and (LSTM)
// peepholes, and a static sequence length. The kernel
// (runtime/src/kernels/rnn.cc) projects every time step's input through the
// GEMM core at once, then runs the recurrence. Not evaluated on the host: a
// recurrence over constants is not something models fold.

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

bool IsLstm(const Node& n) { return n.op == "LSTM"; }

// 0 forward, 1 reverse, 2 bidirectional; -1 for anything else.
int Direction(const Node& n) {
  const std::string d = n.GetString("direction", "forward");
  if (d == "forward") return 0;
  if (d == "reverse") return 1;
  if (d == "bidirectional") return 2;
  return -1;
}

// The ONNX default activations, once per direction (the importer keeps a
// STRINGS attribute as one comma-joined string).
std::string DefaultActivations(bool lstm, int dirs) {
  std::string one = lstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh";
  std::string all = one;
  for (int d = 1; d < dirs; ++d) all += "," + one;
  return all;
}

Check InferRnn(InferContext& c) {
  const Node& n = c.node();
  const bool lstm = IsLstm(n);
  const int gates = lstm ? 4 : 3;
  const int direction = Direction(n);
  if (direction < 0) {
    return c.Err("direction '" + n.GetString("direction", "") +
                 "' is not forward, reverse or bidirectional");
  }
  const int64_t dirs = direction == 2 ? 2 : 1;
  if (n.FindAttr("clip") != nullptr) return c.Err("the cell clip attribute is not supported");
  if (n.GetInt("input_forget", 0) != 0) return c.Err("input_forget = 1 is not supported");
  if (n.GetInt("layout", 0) != 0) {
    return c.Err("layout = 1 (batch first) is not supported; export with layout 0");
  }
  if (n.FindAttr("activations") != nullptr &&
      n.GetString("activations", "") != DefaultActivations(lstm, static_cast<int>(dirs))) {
    return c.Err("activations '" + n.GetString("activations", "") +
                 "' are not supported; only the defaults (" +
                 DefaultActivations(lstm, static_cast<int>(dirs)) + ")");
  }
  if (!lstm && n.GetInt("linear_before_reset", 0) > 1) {
    return c.Err("linear_before_reset must be 0 or 1");
  }
  for (int i = 0; i < 3; ++i) {
    BATON_TRY(c.RequireFloat(i));
    if (c.Rank(i) != 3) return c.Err("input " + c.Desc(i) + " must have rank 3");
  }
  const int64_t seq = c.S(0)[0], batch = c.S(0)[1], input = c.S(0)[2];
  const int64_t hidden = c.S(2)[2];
  const int64_t gh = gates * hidden;
  if (n.FindAttr("hidden_size") != nullptr && n.GetInt("hidden_size", 0) != hidden) {
    return c.Err("hidden_size " + std::to_string(n.GetInt("hidden_size", 0)) +
                 " does not match R " + c.Desc(2));
  }
  if (hidden <= 0 || seq <= 0 || batch <= 0) {
    return c.Err("X " + c.Desc(0) + " and R " + c.Desc(2) + " must have non-empty dims");
  }
  auto expect = [&](int i, const Shape& shape, const char* what) -> Check {
    if (!c.Has(i)) return Check();
    if (i != 4) BATON_TRY(c.RequireFloat(i));
    if (c.S(i) != shape) {
      return c.Err(std::string(what) + " " + c.Desc(i) + " must have shape " + ShapeString(shape));
    }
    return Check();
  };
  BATON_TRY(expect(1, {dirs, gh, input}, "W"));
  BATON_TRY(expect(2, {dirs, gh, hidden}, "R"));
  BATON_TRY(expect(3, {dirs, 2 * gh}, "B"));
  BATON_TRY(expect(4, {batch}, "sequence_lens"));
  BATON_TRY(expect(5, {dirs, batch, hidden}, "initial_h"));
  if (lstm) {
    BATON_TRY(expect(6, {dirs, batch, hidden}, "initial_c"));
    BATON_TRY(expect(7, {dirs, 3 * hidden}, "P"));
  }
  if (c.Has(4)) {
    // A static sequence length: every batch item runs all T steps.
    BATON_TRY(c.RequireDType(4, DType::Int32));
    const Tensor* v = c.Value(4);
    bool full = v != nullptr;
    if (full) {
      for (int64_t len : v->IntData()) full = full && len == seq;
    }
    if (!full) {
      return c.Err("sequence_lens " + c.Name(4) + " must be a constant equal to the sequence " +
                   "length " + std::to_string(seq) + " for every batch item (variable lengths " +
                   "are not supported)");
    }
  }
  c.Output(DType::Float32, {seq, dirs, batch, hidden});
  for (int k = 1; k < c.NumOutputs(); ++k) c.Output(DType::Float32, {dirs, batch, hidden});
  return Check();
}

Result<LoweredParams> LowerRnn(flatbuffers::FlatBufferBuilder* b, const Graph&, const Node& n) {
  const int direction = Direction(n);
  if (direction < 0) return Fail(internal::NodeWhere(n) + ": bad direction");
  const int lbr = !IsLstm(n) && n.GetInt("linear_before_reset", 0) != 0 ? 1 : 0;
  LoweredParams out;
  out.type = schema::Params::AxisParams;
  out.offset = schema::CreateAxisParams(*b, direction + 4 * lbr).Union();
  return out;
}

// The input projections and recurrent products (gates x (I + H) per output
// element of Y) plus about ten operations per gate element.
double RnnMacs(const schema::Plan& plan, const schema::Node& node, double out_elements) {
  const double input = internal::PlanDim(internal::PlanInput(plan, node, 0), 2);
  const double hidden = internal::PlanDim(internal::PlanInput(plan, node, 2), 2);
  const double gates = node.op() == schema::Op::LSTM ? 4 : 3;
  return out_elements * gates * (input + hidden + 10);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"LSTM", 3, 8, 1, 3, InferRnn, true, schema::Op::LSTM, kAllInputs, LowerRnn, RnnMacs, nullptr, false},
    {"GRU", 3, 6, 1, 2, InferRnn, true, schema::Op::GRU, kAllInputs, LowerRnn, RnnMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kRnnOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
