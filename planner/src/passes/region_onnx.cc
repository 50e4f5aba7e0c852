// A region of the planner's graph as a self-contained ONNX model
// (passes/regions.h): planner nodes back to NodeProtos, fusions expanded.

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <set>

#include "baton/planner/passes/regions.h"

namespace baton::planner {
namespace {

// ONNX ops whose planner form (inputs, attributes, semantics) is ONNX's at
// the imported opset. Ops the simplifier or importer rewrote into Baton's
// own forms (QLinearLookup, QLinearSoftmax, Gelu before opset 20, the
// com.microsoft QLinear ops) and ops whose attributes the IR does not keep
// faithfully (STRINGS attributes: LSTM, GRU) are not listed.
const std::set<std::string>& PlainOps() {
  // clang-format off
  static const std::set<std::string> ops = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "Softplus", "Elu", "PRelu",
      "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Erf", "MaxPool", "AveragePool",
      "GlobalAveragePool", "GlobalMaxPool", "Concat", "Softmax", "LogSoftmax", "Reshape",
      "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity", "BatchNormalization",
      "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "QuantizeLinear", "DequantizeLinear"};
  // clang-format on
  return ops;
}

// Fused ops expanded back into ONNX nodes.
const std::set<std::string>& FusedOps() {
  static const std::set<std::string> ops = {"Swish", "HardSwish", "Mish"};
  return ops;
}

int32_t ElemType(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return onnx::TensorProto::FLOAT;
    case DType::Int32:
      return onnx::TensorProto::INT32;
    case DType::Int64:
      return onnx::TensorProto::INT64;
    case DType::UInt8:
      return onnx::TensorProto::UINT8;
    case DType::Int8:
      return onnx::TensorProto::INT8;
    case DType::Bool:
      return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

void SetValueInfo(const Tensor& t, const std::string& name, onnx::ValueInfoProto* vi) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(ElemType(t.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
}

void SetInitializer(const Tensor& t, onnx::TensorProto* out) {
  out->set_name(t.name);
  out->set_data_type(ElemType(t.dtype));
  for (int64_t d : t.shape) out->add_dims(d);
  out->set_raw_data(std::string(t.data.begin(), t.data.end()));
}

void FloatScalar(const std::string& name, float v, onnx::TensorProto* out) {
  out->set_name(name);
  out->set_data_type(onnx::TensorProto::FLOAT);
  out->add_float_data(v);
}

// Builds the region's GraphProto.
class RegionWriter {
 public:
  RegionWriter(const Graph& g, onnx::GraphProto* out) : g_(g), out_(out) {
    opset_ = g.opset > 0 ? g.opset : 13;
    for (const Tensor& t : g.tensors) used_names_.insert(t.name);
  }
  int64_t opset() const { return opset_; }

  Check Node(const planner::Node& node) {
    if (!RegionOpSerializable(node.op)) {
      return Fail("node '" + node.name + "' (op " + node.op +
                  ") cannot be serialized into a foreign-runtime region: " +
                  RegionOpSerializableWhy(node.op));
    }
    std::vector<std::string> inputs;
    for (int t : node.inputs) inputs.push_back(t < 0 ? std::string() : g_.tensors[t].name);
    // A fused sum (Conv's input 3) becomes an Add after the Conv.
    std::string sum;
    if (node.op == "Conv" && inputs.size() > 3) {
      sum = inputs[3];
      inputs.resize(3);
    }
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    std::vector<std::string> outputs;
    for (int t : node.outputs) outputs.push_back(g_.tensors[t].name);
    // With a fused sum, clamp or activation, the node writes a fresh value
    // that each of them in turn reads: act(clamp(node + sum)).
    const std::string final_out = outputs.empty() ? std::string() : outputs[0];
    const bool post = !sum.empty() || node.clamp || !node.activation.empty();
    if (post) {
      const bool only_clamp = sum.empty() && node.activation.empty();
      outputs[0] = Fresh(final_out + (only_clamp ? "/pre_clamp" : "/pre_epilogue"));
      AddValueInfo(g_.tensors[node.outputs[0]], outputs[0]);
    }
    if (FusedOps().count(node.op)) {
      BATON_TRY(Expand(node, inputs, outputs));
    } else {
      onnx::NodeProto* proto = out_->add_node();
      proto->set_name(node.name);
      proto->set_op_type(node.op);
      for (const std::string& i : inputs) proto->add_input(i);
      for (const std::string& o : outputs) proto->add_output(o);
      for (const auto& [key, attr] : node.attrs) {
        BATON_TRY(AddAttribute(node, key, attr, proto));
      }
    }
    if (!post) return Check();
    std::string x = outputs[0];
    const bool clamp_next = node.clamp.has_value(), act_next = !node.activation.empty();
    if (!sum.empty()) {
      const std::string y = (clamp_next || act_next) ? Fresh(final_out + "/summed") : final_out;
      if (y != final_out) AddValueInfo(g_.tensors[node.outputs[0]], y);
      Add(node.name + "/sum", "Add", {x, sum}, y);
      x = y;
    }
    if (clamp_next) {
      const std::string y = act_next ? Fresh(final_out + "/clamped") : final_out;
      if (y != final_out) AddValueInfo(g_.tensors[node.outputs[0]], y);
      AddClamp(node, x, y);
      x = y;
    }
    if (act_next) BATON_TRY(AddActivation(node, x, final_out));
    return Check();
  }

  // y = node's fused activation (Node::activation) of x, as ONNX nodes.
  Check AddActivation(const planner::Node& node, const std::string& x, const std::string& y) {
    planner::Node act;
    act.name = node.name + "/" + node.activation;
    act.op = node.activation;
    act.outputs = node.outputs;  // for the value infos Expand adds
    if (FusedOps().count(act.op)) return Expand(act, {x}, {y});
    onnx::NodeProto* proto = Add(act.name, act.op, {x}, y);
    if (act.op == "HardSigmoid") {
      FloatAttr(proto, "alpha", node.activation_alpha);
      FloatAttr(proto, "beta", node.activation_beta);
    }
    return Check();
  }

  void AddValueInfo(const Tensor& like, const std::string& name) {
    SetValueInfo(like, name, out_->add_value_info());
  }

 private:
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_names_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_names_.insert(name);
    return name;
  }

  onnx::NodeProto* Add(const std::string& name, const std::string& op,
                       const std::vector<std::string>& inputs, const std::string& output) {
    onnx::NodeProto* proto = out_->add_node();
    proto->set_name(name);
    proto->set_op_type(op);
    for (const std::string& i : inputs) proto->add_input(i);
    proto->add_output(output);
    return proto;
  }

  static void FloatAttr(onnx::NodeProto* proto, const char* key, float v) {
    onnx::AttributeProto* a = proto->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  // y = clamp(x): Relu for [0, inf), Clip otherwise (bounds as inputs from
  // opset 11, attributes before).
  void AddClamp(const planner::Node& node, const std::string& x, const std::string& y) {
    const float lo = node.clamp->first, hi = node.clamp->second;
    const float inf = std::numeric_limits<float>::infinity();
    if (lo == 0.0f && hi == inf) {
      Add(node.name + "/relu", "Relu", {x}, y);
      return;
    }
    if (opset_ >= 11) {
      const std::string lo_name = Fresh(node.name + "/clip_min");
      const std::string hi_name = Fresh(node.name + "/clip_max");
      FloatScalar(lo_name, lo, out_->add_initializer());
      FloatScalar(hi_name, hi, out_->add_initializer());
      Add(node.name + "/clip", "Clip", {x, lo_name, hi_name}, y);
    } else {
      onnx::NodeProto* clip = Add(node.name + "/clip", "Clip", {x}, y);
      FloatAttr(clip, "min", lo);
      FloatAttr(clip, "max", hi);
    }
  }

  // Swish, HardSwish and Mish as the ONNX nodes they were fused from.
  Check Expand(const planner::Node& node, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs) {
    const std::string& x = inputs[0];
    const std::string& y = outputs[0];
    const Tensor& like = g_.tensors[node.outputs[0]];
    if (node.op == "HardSwish" && opset_ >= 14) {
      Add(node.name, "HardSwish", {x}, y);
      return Check();
    }
    std::string gate = Fresh(y + "/gate");
    AddValueInfo(like, gate);
    if (node.op == "Swish") {
      Add(node.name + "/sigmoid", "Sigmoid", {x}, gate);
    } else if (node.op == "HardSwish") {
      onnx::NodeProto* hs = Add(node.name + "/hard_sigmoid", "HardSigmoid", {x}, gate);
      FloatAttr(hs, "alpha", 1.0f / 6.0f);
      FloatAttr(hs, "beta", 0.5f);
    } else {  // Mish
      const std::string soft = Fresh(y + "/softplus");
      AddValueInfo(like, soft);
      Add(node.name + "/softplus", "Softplus", {x}, soft);
      Add(node.name + "/tanh", "Tanh", {soft}, gate);
    }
    Add(node.name, "Mul", {x, gate}, y);
    return Check();
  }

  Check AddAttribute(const planner::Node& node, const std::string& key, const Attr& attr,
                     onnx::NodeProto* proto) {
    onnx::AttributeProto* a = proto->add_attribute();
    a->set_name(key);
    switch (attr.kind) {
      case Attr::Kind::kInt:
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(attr.i);
        break;
      case Attr::Kind::kFloat:
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(attr.f);
        break;
      case Attr::Kind::kInts:
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : attr.ints) a->add_ints(v);
        break;
      case Attr::Kind::kFloats:
        a->set_type(onnx::AttributeProto::FLOATS);
        for (float v : attr.floats) a->add_floats(v);
        break;
      case Attr::Kind::kString:
        if (attr.s.find(',') != std::string::npos) {
          return Fail("node '" + node.name + "' (op " + node.op + "): attribute '" + key +
                      "' may be a list of strings, which a region cannot carry");
        }
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(attr.s);
        break;
      case Attr::Kind::kStrings:
      case Attr::Kind::kTensor:
        // Only custom ops carry these, and a region holds no custom op.
        return Fail("node '" + node.name + "' (op " + node.op + "): attribute '" + key +
                    "' is a string list or a tensor, which a region cannot carry");
    }
    return Check();
  }

  const Graph& g_;
  onnx::GraphProto* out_;
  int64_t opset_ = 13;
  std::set<std::string> used_names_;
};

}  // namespace

bool RegionOpSerializable(const std::string& op) {
  return PlainOps().count(op) > 0 || FusedOps().count(op) > 0;
}

std::string RegionOpSerializableWhy(const std::string& op) {
  if (RegionOpSerializable(op)) return "it can";
  if (FindOp(op) == nullptr) return "Baton does not know op '" + op + "'";
  return "Baton's form of op '" + op +
         "' has no ONNX equivalent it writes back (docs/formats.md lists the ops a region "
         "carries)";
}

Result<std::string> SerializeRegion(const Graph& g, const std::vector<int>& nodes,
                                    const std::vector<int>& inputs, const std::vector<int>& outputs,
                                    const std::string& name) {
  onnx::ModelProto model;
  model.set_ir_version(8);  // opsets up to 17
  model.set_producer_name("baton");
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(name);
  RegionWriter writer(g, graph);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(writer.opset());
  std::set<int> inits, produced;
  for (int n : nodes) {
    for (int t : g.nodes[n].inputs) {
      if (t >= 0 && g.tensors[t].is_constant && inits.insert(t).second) {
        SetInitializer(g.tensors[t], graph->add_initializer());
      }
    }
  }
  for (int t : inputs) SetValueInfo(g.tensors[t], g.tensors[t].name, graph->add_input());
  for (int n : nodes) {
    BATON_TRY(writer.Node(g.nodes[n]));
    for (int t : g.nodes[n].outputs) produced.insert(t);
  }
  for (int t : outputs) SetValueInfo(g.tensors[t], g.tensors[t].name, graph->add_output());
  for (int t : produced) {
    if (std::find(outputs.begin(), outputs.end(), t) == outputs.end()) {
      writer.AddValueInfo(g.tensors[t], g.tensors[t].name);
    }
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Fail("region '" + name + "': its ONNX model cannot be serialized (over 2 GiB?)");
  }
  return bytes;
}

}  // namespace baton::planner
