#include "baton/linux/armnn_plugin.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <armnn/ArmNN.hpp>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "baton/custom_op.h"

namespace baton {
namespace {

// A model the plugin cannot run; caught in prepare and turned into a Status.
struct BuildError : std::runtime_error {
  BuildError(StatusCode c, const std::string& what) : std::runtime_error(what), code(c) {}
  StatusCode code;
};

[[noreturn]] void Fail(const std::string& what, StatusCode code = StatusCode::kInvalidArgument) {
  throw BuildError(code, what);
}

using Dims = std::vector<int64_t>;

std::string DimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Element count; a negative dimension or more than 2^40 elements (hostile
// or corrupted models) is an error, never an overflow.
int64_t Elements(const Dims& d) {
  constexpr int64_t kMax = int64_t{1} << 40;
  int64_t n = 1;
  for (int64_t v : d) {
    if (v < 0 || (v > 0 && n > kMax / v)) Fail("shape " + DimsText(d) + " is invalid or too large");
    n *= v;
  }
  return n;
}

armnn::TensorInfo Info(const Dims& d) {
  if (d.empty() || d.size() > armnn::MaxNumOfTensorDimensions) {
    Fail("rank " + std::to_string(d.size()) + " tensors are not supported by Arm NN");
  }
  std::vector<unsigned int> u;
  for (int64_t v : d) {
    if (v <= 0) Fail("shape " + DimsText(d) + " has a dimension Arm NN cannot hold");
    u.push_back(static_cast<unsigned int>(v));
  }
  return armnn::TensorInfo(armnn::TensorShape(static_cast<unsigned int>(u.size()), u.data()),
                           armnn::DataType::Float32);
}

Dims FromShape(const armnn::TensorShape& s) {
  Dims d;
  for (unsigned int i = 0; i < s.GetNumDimensions(); ++i) d.push_back(s[i]);
  return d;
}

// ---------------------------------------------------------------------------
// ONNX graph -> armnn::INetwork.

class NetworkBuilder {
 public:
  NetworkBuilder(const onnx::ModelProto& model, const KernelCall& call, armnn::INetwork* net)
      : model_(model), call_(call), net_(net) {}

  void Build() {
    for (const auto& op : model_.opset_import()) {
      if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
    }
    if (opset_ == 0) Fail("model: no ai.onnx opset_import");
    if (!model_.has_graph()) Fail("model: no graph");
    const onnx::GraphProto& g = model_.graph();
    for (const auto& t : g.initializer()) constants_[t.name()] = ReadTensor(t, "initializer");
    BindInputs(g);
    for (int i = 0; i < g.node_size(); ++i) {
      node_ = &g.node(i);
      node_label_ = "ONNX node '" +
                    (node_->name().empty() ? "#" + std::to_string(i) : node_->name()) + "' (" +
                    node_->op_type() + ")";
      try {
        AddNode(*node_);
      } catch (const BuildError& e) {
        throw BuildError(e.code, node_label_ + ": " + e.what());
      } catch (const armnn::Exception& e) {
        throw BuildError(StatusCode::kInvalidArgument, node_label_ + ": Arm NN: " + e.what());
      }
    }
    node_ = nullptr;
    BindOutputs(g);
  }

 private:
  struct Value {
    armnn::IOutputSlot* slot = nullptr;
    Dims dims;
  };
  struct Constant {
    Dims dims;
    std::vector<float> f;    // float32 data
    std::vector<int64_t> i;  // int64/int32 data
    bool is_float = true;
  };

  static Constant ReadTensor(const onnx::TensorProto& t, const char* what) {
    Constant c;
    for (int64_t d : t.dims()) c.dims.push_back(d);
    const int64_t n = Elements(c.dims);
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      Fail(std::string(what) + " '" + t.name() + "' has external data (not supported)");
    }
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        if (t.has_raw_data()) {
          if (static_cast<int64_t>(raw.size()) != n * 4)
            Fail(std::string(what) + " '" + t.name() + "': raw_data size does not match its shape");
          c.f.resize(static_cast<size_t>(n));
          std::memcpy(c.f.data(), raw.data(), raw.size());
        } else {
          c.f.assign(t.float_data().begin(), t.float_data().end());
        }
        if (static_cast<int64_t>(c.f.size()) != n)
          Fail(std::string(what) + " '" + t.name() + "': data size does not match its shape");
        break;
      case onnx::TensorProto::INT64:
      case onnx::TensorProto::INT32: {
        c.is_float = false;
        const size_t width = t.data_type() == onnx::TensorProto::INT64 ? 8 : 4;
        if (t.has_raw_data()) {
          if (static_cast<int64_t>(raw.size()) != n * static_cast<int64_t>(width))
            Fail(std::string(what) + " '" + t.name() + "': raw_data size does not match its shape");
          for (int64_t k = 0; k < n; ++k) {
            if (width == 8) {
              int64_t v;
              std::memcpy(&v, raw.data() + k * 8, 8);
              c.i.push_back(v);
            } else {
              int32_t v;
              std::memcpy(&v, raw.data() + k * 4, 4);
              c.i.push_back(v);
            }
          }
        } else if (width == 8) {
          c.i.assign(t.int64_data().begin(), t.int64_data().end());
        } else {
          c.i.assign(t.int32_data().begin(), t.int32_data().end());
        }
        if (static_cast<int64_t>(c.i.size()) != n)
          Fail(std::string(what) + " '" + t.name() + "': data size does not match its shape");
        break;
      }
      default:
        Fail(std::string(what) + " '" + t.name() + "' has data type " +
             std::to_string(t.data_type()) + " (float32 and int64 only)");
    }
    return c;
  }

  void BindInputs(const onnx::GraphProto& g) {
    uint32_t k = 0;
    for (const auto& in : g.input()) {
      if (constants_.count(in.name())) continue;
      if (k >= call_.num_inputs) {
        Fail("model has more graph inputs than the node's " + std::to_string(call_.num_inputs) +
             " inputs");
      }
      const TensorArg& arg = call_.inputs[k];
      if (!arg.present() || arg.dtype() != DType::Float32) {
        Fail("node input " + std::to_string(k) + " ('" + in.name() + "') must be a float32 tensor");
      }
      Dims dims;
      for (uint32_t d = 0; d < arg.rank(); ++d) dims.push_back(arg.dim(d));
      CheckDeclaredShape(in, dims, "graph input");
      armnn::IConnectableLayer* layer =
          net_->AddInputLayer(static_cast<armnn::LayerBindingId>(k), in.name().c_str());
      layer->GetOutputSlot(0).SetTensorInfo(Info(dims));
      values_[in.name()] = {&layer->GetOutputSlot(0), dims};
      input_layers_.insert(layer->GetGuid());
      ++k;
    }
    if (k != call_.num_inputs) {
      Fail("model has " + std::to_string(k) + " graph inputs (not initializers) but the node has " +
           std::to_string(call_.num_inputs));
    }
  }

  // A graph input or output whose declared type disagrees with the node's
  // tensor: the region was cut from another model.
  static void CheckDeclaredShape(const onnx::ValueInfoProto& v, const Dims& dims,
                                 const char* what) {
    if (!v.has_type() || !v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    if (tt.elem_type() != 0 && tt.elem_type() != onnx::TensorProto::FLOAT) {
      Fail(std::string(what) + " '" + v.name() + "' is not float32");
    }
    if (!tt.has_shape()) return;
    const auto& s = tt.shape();
    bool match = s.dim_size() == static_cast<int>(dims.size());
    for (int d = 0; match && d < s.dim_size(); ++d) {
      if (s.dim(d).has_dim_value() && s.dim(d).dim_value() != dims[static_cast<size_t>(d)])
        match = false;
    }
    if (!match) {
      Fail(std::string(what) + " '" + v.name() +
           "' is declared with another shape than the node's tensor " + DimsText(dims));
    }
  }

  void BindOutputs(const onnx::GraphProto& g) {
    if (static_cast<uint32_t>(g.output_size()) != call_.num_outputs) {
      Fail("model has " + std::to_string(g.output_size()) + " graph outputs but the node has " +
           std::to_string(call_.num_outputs));
    }
    for (int k = 0; k < g.output_size(); ++k) {
      const auto& out = g.output(k);
      auto it = values_.find(out.name());
      if (it == values_.end() || input_layers_.count(it->second.slot->GetOwningLayerGuid())) {
        Fail("graph output '" + out.name() + "' is not computed by a node of the model");
      }
      const TensorArg& arg = call_.outputs[k];
      Dims dims;
      for (uint32_t d = 0; d < arg.rank(); ++d) dims.push_back(arg.dim(d));
      if (arg.dtype() != DType::Float32 || dims != it->second.dims) {
        Fail("graph output '" + out.name() + "' has shape " + DimsText(it->second.dims) +
             " but node output " + std::to_string(k) + " is " + DimsText(dims) +
             (arg.dtype() != DType::Float32 ? " (not float32)" : ""));
      }
      CheckDeclaredShape(out, dims, "graph output");
      armnn::IConnectableLayer* layer = net_->AddOutputLayer(k, out.name().c_str());
      it->second.slot->Connect(layer->GetInputSlot(0));
    }
  }

  // --- attributes ---------------------------------------------------------
  const onnx::AttributeProto* Attr(const char* name) const {
    for (const auto& a : node_->attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  int64_t Int(const char* name, int64_t def) const {
    const auto* a = Attr(name);
    return a ? a->i() : def;
  }
  float Float(const char* name, float def) const {
    const auto* a = Attr(name);
    return a ? a->f() : def;
  }
  std::string String(const char* name, const char* def) const {
    const auto* a = Attr(name);
    return a ? a->s() : def;
  }
  Dims Ints(const char* name, Dims def) const {
    const auto* a = Attr(name);
    if (!a) return def;
    return Dims(a->ints().begin(), a->ints().end());
  }

  // --- operands -----------------------------------------------------------
  const std::string& In(int k) const {
    static const std::string empty;
    return k < node_->input_size() ? node_->input(k) : empty;
  }
  bool IsConstant(const std::string& name) const { return constants_.count(name) != 0; }
  const Constant& Const(int k) const {
    auto it = constants_.find(In(k));
    if (it == constants_.end())
      Fail("input " + std::to_string(k) + " ('" + In(k) + "') must be a constant");
    return it->second;
  }
  const std::vector<float>& ConstF(int k) const {
    const Constant& c = Const(k);
    if (!c.is_float) Fail("input '" + In(k) + "' must be float32");
    return c.f;
  }
  // A tensor computed in the graph, or a constant turned into a Constant layer
  // (with `dims` instead of its own shape when given: broadcasting).
  Value Operand(int k, const Dims* dims = nullptr) {
    const std::string& name = In(k);
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    auto c = constants_.find(name);
    if (c == constants_.end()) {
      Fail("input '" + name + "' is defined by nothing before it");
    }
    if (!c->second.is_float) Fail("input '" + name + "' must be float32");
    Value v;
    v.dims = dims ? *dims : c->second.dims;
    if (v.dims.empty()) v.dims = {1};
    const armnn::TensorInfo info = Info(v.dims);
    armnn::IConnectableLayer* layer =
        net_->AddConstantLayer(armnn::ConstTensor(info, c->second.f.data()), name.c_str());
    layer->GetOutputSlot(0).SetTensorInfo(info);
    v.slot = &layer->GetOutputSlot(0);
    return v;
  }

  // Connects `inputs` to `layer`, infers its output shape and records it as
  // the node's output `k`.
  // The output shape is `dims` when given, else Arm NN's inference from the
  // input shapes (only for layers whose inference reads nothing but them:
  // Debian's Arm NN asserts, i.e. aborts, on anything else).
  Value Finish(armnn::IConnectableLayer* layer, const std::vector<Value>& inputs, int out = 0,
               bool record = true, const Dims* dims = nullptr) {
    std::vector<armnn::TensorShape> shapes;
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i].slot->Connect(layer->GetInputSlot(static_cast<unsigned int>(i)));
      shapes.push_back(inputs[i].slot->GetTensorInfo().GetShape());
    }
    Value v;
    v.dims = dims ? *dims : FromShape(layer->InferOutputShapes(shapes).at(0));
    layer->GetOutputSlot(0).SetTensorInfo(Info(v.dims));
    v.slot = &layer->GetOutputSlot(0);
    if (record) {
      if (out >= node_->output_size() || node_->output(out).empty()) Fail("missing output");
      values_[node_->output(out)] = v;
    }
    return v;
  }

  Value Reshape(const Value& in, const Dims& dims, const std::string& suffix) {
    armnn::ReshapeDescriptor d;
    d.m_TargetShape = Info(dims).GetShape();
    armnn::IConnectableLayer* layer = net_->AddReshapeLayer(d, Name(suffix).c_str());
    in.slot->Connect(layer->GetInputSlot(0));
    layer->GetOutputSlot(0).SetTensorInfo(Info(dims));
    return {&layer->GetOutputSlot(0), dims};
  }
  void Record(const Value& v) { values_[node_->output(0)] = v; }
  std::string Name(const std::string& suffix = "") const { return node_->name() + suffix; }

  void RequireRank(const Value& v, size_t rank) const {
    if (v.dims.size() != rank) {
      Fail("input of shape " + DimsText(v.dims) + ": rank " + std::to_string(rank) + " expected");
    }
  }
  void NoExtraOutputs(int n) const {
    for (int k = n; k < node_->output_size(); ++k) {
      if (!node_->output(k).empty())
        Fail("optional output " + std::to_string(k) + " is not supported");
    }
  }

  // --- ops ----------------------------------------------------------------
  void AddNode(const onnx::NodeProto& n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      Fail("op domain '" + n.domain() + "' is not supported", StatusCode::kUnimplemented);
    }
    if (n.output_size() < 1 || n.output(0).empty()) Fail("node has no output");
    const std::string& op = n.op_type();
    if (op == "Constant") return AddConstant();
    if (op == "Identity") return Record(Operand(0));
    if (op == "Conv") return AddConv();
    if (op == "Gemm") return AddGemm();
    if (op == "MatMul") return AddMatMul();
    if (op == "Relu") return AddActivation(armnn::ActivationFunction::ReLu, 0, 0);
    if (op == "Sigmoid") return AddActivation(armnn::ActivationFunction::Sigmoid, 0, 0);
    if (op == "Tanh") return AddActivation(armnn::ActivationFunction::TanH, 1, 1);
    if (op == "LeakyRelu")
      return AddActivation(armnn::ActivationFunction::LeakyReLu, Float("alpha", 0.01f), 0);
    if (op == "HardSwish") return AddActivation(armnn::ActivationFunction::HardSwish, 0, 0);
    if (op == "Clip") return AddClip();
    if (op == "BatchNormalization") return AddBatchNorm();
    if (op == "MaxPool") return AddPool(armnn::PoolingAlgorithm::Max, false);
    if (op == "AveragePool") return AddPool(armnn::PoolingAlgorithm::Average, false);
    if (op == "GlobalAveragePool") return AddPool(armnn::PoolingAlgorithm::Average, true);
    if (op == "GlobalMaxPool") return AddPool(armnn::PoolingAlgorithm::Max, true);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return AddBinary(op);
    if (op == "Concat") return AddConcat();
    if (op == "Softmax") return AddSoftmax();
    if (op == "Reshape") return AddReshape();
    if (op == "Flatten") return AddFlatten();
    Fail("op is not supported by the Arm NN plugin", StatusCode::kUnimplemented);
  }

  void AddConstant() {
    const auto* value = Attr("value");
    if (!value || !value->has_t()) Fail("only the 'value' attribute is supported");
    constants_[node_->output(0)] = ReadTensor(value->t(), "Constant");
  }

  void AddActivation(armnn::ActivationFunction f, float a, float b) {
    NoExtraOutputs(1);
    armnn::ActivationDescriptor d;
    d.m_Function = f;
    d.m_A = a;
    d.m_B = b;
    Finish(net_->AddActivationLayer(d, Name().c_str()), {Operand(0)});
  }

  void AddClip() {
    float lo = std::numeric_limits<float>::lowest();
    float hi = std::numeric_limits<float>::max();
    if (opset_ < 11) {
      lo = Float("min", lo);
      hi = Float("max", hi);
    } else {
      if (!In(1).empty()) lo = ScalarOf(1);
      if (!In(2).empty()) hi = ScalarOf(2);
    }
    AddActivation(armnn::ActivationFunction::BoundedReLu, hi, lo);
  }
  // Inference form only: scale, B, mean and var are constants of C values.
  void AddBatchNorm() {
    NoExtraOutputs(1);
    const Value x = Operand(0);
    if (x.dims.size() < 2) Fail("input must have rank 2 or more");
    const int64_t c = x.dims[1];
    for (int k = 1; k <= 4; ++k) {
      if (static_cast<int64_t>(ConstF(k).size()) != c) {
        Fail("input '" + In(k) + "' must have " + std::to_string(c) + " values (one per channel)");
      }
    }
    if (Int("training_mode", 0) != 0)
      Fail("training_mode is not supported", StatusCode::kUnimplemented);
    armnn::BatchNormalizationDescriptor d;
    d.m_Eps = Float("epsilon", 1e-5f);
    d.m_DataLayout = armnn::DataLayout::NCHW;
    const armnn::TensorInfo info = Info({c});
    Finish(net_->AddBatchNormalizationLayer(d, armnn::ConstTensor(info, ConstF(3).data()),
                                            armnn::ConstTensor(info, ConstF(4).data()),
                                            armnn::ConstTensor(info, ConstF(2).data()),
                                            armnn::ConstTensor(info, ConstF(1).data()),
                                            Name().c_str()),
           {x});
  }

  float ScalarOf(int k) const {
    const std::vector<float>& v = ConstF(k);
    if (v.size() != 1) Fail("input '" + In(k) + "' must be a scalar");
    return v[0];
  }

  // ONNX pads [top, left, bottom, right] (or auto_pad) for a 2-D window.
  struct Window {
    uint32_t pad[4] = {0, 0, 0, 0};  // top, left, bottom, right
    uint32_t stride[2] = {1, 1};
    uint32_t dilation[2] = {1, 1};
  };
  Window Windowing(const Dims& in, int64_t kh, int64_t kw) const {
    Window w;
    const Dims strides = Ints("strides", {1, 1});
    const Dims dilations = Ints("dilations", {1, 1});
    if (strides.size() != 2 || dilations.size() != 2) Fail("only 2-D windows are supported");
    for (int k = 0; k < 2; ++k) {
      if (strides[k] < 1 || dilations[k] < 1) Fail("strides and dilations must be positive");
      w.stride[k] = static_cast<uint32_t>(strides[k]);
      w.dilation[k] = static_cast<uint32_t>(dilations[k]);
    }
    const std::string auto_pad = String("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
      const Dims pads = Ints("pads", {0, 0, 0, 0});
      if (pads.size() != 4) Fail("pads must have 4 values");
      for (int k = 0; k < 4; ++k) {
        if (pads[k] < 0) Fail("negative pads are not supported");
        w.pad[k] = static_cast<uint32_t>(pads[k]);
      }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t kernel[2] = {kh, kw};
      for (int k = 0; k < 2; ++k) {
        const int64_t size = in[2 + k];
        const int64_t out = (size + w.stride[k] - 1) / w.stride[k];
        const int64_t total = std::max<int64_t>(
            0, (out - 1) * w.stride[k] + (kernel[k] - 1) * w.dilation[k] + 1 - size);
        const int64_t small = total / 2;
        const bool upper = auto_pad == "SAME_UPPER";
        w.pad[k] = static_cast<uint32_t>(upper ? small : total - small);
        w.pad[k + 2] = static_cast<uint32_t>(upper ? total - small : small);
      }
    } else if (auto_pad != "VALID") {
      Fail("auto_pad '" + auto_pad + "' is not supported");
    }
    return w;
  }

  void AddConv() {
    NoExtraOutputs(1);
    const Value x = Operand(0);
    RequireRank(x, 4);
    const Constant& wc = Const(1);
    if (!wc.is_float || wc.dims.size() != 4) Fail("weights must be a float32 4-D constant");
    const int64_t group = Int("group", 1);
    const int64_t cin = x.dims[1], cout = wc.dims[0], kh = wc.dims[2], kw = wc.dims[3];
    const Window w = Windowing(x.dims, kh, kw);
    const bool has_bias = !In(2).empty();
    std::vector<float> bias;
    if (has_bias) {
      bias = ConstF(2);
      if (static_cast<int64_t>(bias.size()) != cout)
        Fail("bias size does not match the output channels");
    }
    const armnn::TensorInfo bias_info = Info({cout});
    armnn::Optional<armnn::ConstTensor> b;
    if (has_bias) b = armnn::ConstTensor(bias_info, bias.data());
    armnn::IConnectableLayer* layer = nullptr;
    if (group == 1) {
      if (wc.dims[1] != cin)
        Fail("weights " + DimsText(wc.dims) + " do not match input " + DimsText(x.dims));
      armnn::Convolution2dDescriptor d;
      Fill(&d, w, has_bias);
      layer = net_->AddConvolution2dLayer(d, armnn::ConstTensor(Info(wc.dims), wc.f.data()), b,
                                          Name().c_str());
    } else if (group == cin && wc.dims[1] == 1 && cout % cin == 0) {
      // Depthwise: ONNX weights [C*M, 1, kH, kW], output channel c*M + m;
      // Arm NN wants [M, C, kH, kW].
      const int64_t m = cout / cin;
      std::vector<float> dw(wc.f.size());
      const int64_t plane = kh * kw;
      for (int64_t c = 0; c < cin; ++c) {
        for (int64_t j = 0; j < m; ++j) {
          std::copy_n(wc.f.begin() + (c * m + j) * plane, plane,
                      dw.begin() + (j * cin + c) * plane);
        }
      }
      armnn::DepthwiseConvolution2dDescriptor d;
      Fill(&d, w, has_bias);
      layer = net_->AddDepthwiseConvolution2dLayer(
          d, armnn::ConstTensor(Info({m, cin, kh, kw}), dw.data()), b, Name().c_str());
    } else {
      Fail("group " + std::to_string(group) + " (neither 1 nor the " + std::to_string(cin) +
               " input channels) is not supported",
           StatusCode::kUnimplemented);
    }
    Dims dims = {x.dims[0], cout, 0, 0};
    for (int k = 0; k < 2; ++k) {
      const int64_t kernel = k == 0 ? kh : kw;
      const int64_t span =
          x.dims[2 + k] + w.pad[k] + w.pad[k + 2] - (kernel - 1) * w.dilation[k] - 1;
      if (span < 0)
        Fail("kernel " + DimsText(wc.dims) + " is larger than the padded input " +
             DimsText(x.dims));
      dims[2 + k] = span / w.stride[k] + 1;
    }
    Finish(layer, {x}, 0, true, &dims);
  }
  template <typename D>
  static void Fill(D* d, const Window& w, bool bias) {
    d->m_PadTop = w.pad[0];
    d->m_PadLeft = w.pad[1];
    d->m_PadBottom = w.pad[2];
    d->m_PadRight = w.pad[3];
    d->m_StrideY = w.stride[0];
    d->m_StrideX = w.stride[1];
    d->m_DilationY = w.dilation[0];
    d->m_DilationX = w.dilation[1];
    d->m_BiasEnabled = bias;
    d->m_DataLayout = armnn::DataLayout::NCHW;
  }

  // y = x W (+ bias) on the last axis of x; W is [K, N] (or [N, K] when
  // transposed).
  Value FullyConnected(const Value& x, std::vector<float> weights, const Dims& wdims,
                       bool transposed, const std::vector<float>* bias) {
    const int64_t k = transposed ? wdims[1] : wdims[0];
    const int64_t n = transposed ? wdims[0] : wdims[1];
    if (x.dims.back() != k)
      Fail("input " + DimsText(x.dims) + " does not match weights " + DimsText(wdims));
    Value in = x;
    const bool flat = x.dims.size() != 2;
    if (flat) in = Reshape(x, {Elements(x.dims) / k, k}, "/flatten");
    armnn::FullyConnectedDescriptor d;
    d.m_BiasEnabled = bias != nullptr;
    d.m_TransposeWeightMatrix = transposed;
    armnn::Optional<armnn::ConstTensor> b;
    const armnn::TensorInfo bias_info = Info({n});
    if (bias) b = armnn::ConstTensor(bias_info, bias->data());
    armnn::IConnectableLayer* layer = net_->AddFullyConnectedLayer(
        d, armnn::ConstTensor(Info(wdims), weights.data()), b, Name().c_str());
    const Dims fc_dims = {in.dims[0], n};
    Value out = Finish(layer, {in}, 0, false, &fc_dims);
    if (flat) {
      Dims dims = x.dims;
      dims.back() = n;
      out = Reshape(out, dims, "/unflatten");
    }
    return out;
  }

  void AddGemm() {
    const Value a = Operand(0);
    RequireRank(a, 2);
    if (Int("transA", 0) != 0) Fail("transA is not supported", StatusCode::kUnimplemented);
    const Constant& bc = Const(1);
    if (!bc.is_float || bc.dims.size() != 2) Fail("B must be a float32 2-D constant");
    const bool trans_b = Int("transB", 0) != 0;
    const float alpha = Float("alpha", 1.0f), beta = Float("beta", 1.0f);
    std::vector<float> w = bc.f;
    for (float& v : w) v *= alpha;
    const int64_t n = trans_b ? bc.dims[0] : bc.dims[1];
    std::vector<float> bias;
    if (!In(2).empty()) {
      const Constant& cc = Const(2);
      if (!cc.is_float) Fail("C must be float32");
      if (Elements(cc.dims) == n &&
          (cc.dims.size() <= 1 || cc.dims[0] == 1 || cc.dims.size() == 1)) {
        bias = cc.f;
      } else if (Elements(cc.dims) == 1) {
        bias.assign(static_cast<size_t>(n), cc.f[0]);
      } else {
        Fail("C of shape " + DimsText(cc.dims) + " (only [N], [1,N] or a scalar)",
             StatusCode::kUnimplemented);
      }
      for (float& v : bias) v *= beta;
    }
    Record(FullyConnected(a, std::move(w), bc.dims, trans_b, bias.empty() ? nullptr : &bias));
  }

  void AddMatMul() {
    const Value a = Operand(0);
    if (a.dims.size() < 2) Fail("A must have rank 2 or more");
    const Constant& bc = Const(1);
    if (!bc.is_float || bc.dims.size() != 2)
      Fail("B must be a float32 2-D constant", StatusCode::kUnimplemented);
    Record(FullyConnected(a, bc.f, bc.dims, false, nullptr));
  }

  void AddPool(armnn::PoolingAlgorithm algorithm, bool global) {
    NoExtraOutputs(1);
    const Value x = Operand(0);
    RequireRank(x, 4);
    armnn::Pooling2dDescriptor d;
    d.m_PoolType = algorithm;
    d.m_DataLayout = armnn::DataLayout::NCHW;
    d.m_OutputShapeRounding = armnn::OutputShapeRounding::Floor;
    d.m_PaddingMethod = armnn::PaddingMethod::Exclude;
    if (global) {
      d.m_PoolHeight = static_cast<uint32_t>(x.dims[2]);
      d.m_PoolWidth = static_cast<uint32_t>(x.dims[3]);
      d.m_StrideX = d.m_StrideY = 1;
    } else {
      const Dims kernel = Ints("kernel_shape", {});
      if (kernel.size() != 2) Fail("kernel_shape must have 2 values");
      const Window w = Windowing(x.dims, kernel[0], kernel[1]);
      if (w.dilation[0] != 1 || w.dilation[1] != 1)
        Fail("dilated pooling is not supported", StatusCode::kUnimplemented);
      d.m_PadTop = w.pad[0];
      d.m_PadLeft = w.pad[1];
      d.m_PadBottom = w.pad[2];
      d.m_PadRight = w.pad[3];
      d.m_StrideY = w.stride[0];
      d.m_StrideX = w.stride[1];
      for (int k = 0; k < 2; ++k) {
        if (kernel[k] < 1 || x.dims[2 + k] + w.pad[k] + w.pad[k + 2] < kernel[k] ||
            w.pad[k] >= kernel[k] || w.pad[k + 2] >= kernel[k]) {
          Fail("kernel_shape " + DimsText(kernel) +
               " does not fit the padded input (or a pad is not smaller than the kernel) " +
               DimsText(x.dims));
        }
      }
      d.m_PoolHeight = static_cast<uint32_t>(kernel[0]);
      d.m_PoolWidth = static_cast<uint32_t>(kernel[1]);
      if (Int("ceil_mode", 0) != 0) d.m_OutputShapeRounding = armnn::OutputShapeRounding::Ceiling;
      // ONNX counts padded elements in the average only with
      // count_include_pad; Arm NN's IgnoreValue counts them as zeros.
      if (algorithm == armnn::PoolingAlgorithm::Average && Int("count_include_pad", 0) != 0) {
        d.m_PaddingMethod = armnn::PaddingMethod::IgnoreValue;
      }
    }
    Finish(net_->AddPooling2dLayer(d, Name().c_str()), {x});
  }

  void AddBinary(const std::string& op) {
    // ONNX (numpy) broadcasting: align ranks by prepending ones; Arm NN
    // broadcasts dimensions of size 1 between inputs of equal rank.
    Dims da = ShapeOf(0), db = ShapeOf(1);
    const size_t rank = std::max(da.size(), db.size());
    da.insert(da.begin(), rank - da.size(), 1);
    db.insert(db.begin(), rank - db.size(), 1);
    for (size_t i = 0; i < rank; ++i) {
      if (da[i] != db[i] && da[i] != 1 && db[i] != 1) {
        Fail("shapes " + DimsText(ShapeOf(0)) + " and " + DimsText(ShapeOf(1)) +
             " do not broadcast");
      }
    }
    Value a = Operand(0, &da), b = Operand(1, &db);
    if (a.dims != da) a = Reshape(a, da, "/lhs_rank");
    if (b.dims != db) b = Reshape(b, db, "/rhs_rank");
    armnn::IConnectableLayer* layer = nullptr;
    if (op == "Add") layer = net_->AddAdditionLayer(Name().c_str());
    if (op == "Sub") layer = net_->AddSubtractionLayer(Name().c_str());
    if (op == "Mul") layer = net_->AddMultiplicationLayer(Name().c_str());
    if (op == "Div") layer = net_->AddDivisionLayer(Name().c_str());
    Finish(layer, {a, b});
  }
  Dims ShapeOf(int k) const {
    auto it = values_.find(In(k));
    if (it != values_.end()) return it->second.dims;
    auto c = constants_.find(In(k));
    if (c == constants_.end()) Fail("input '" + In(k) + "' is defined by nothing before it");
    return c->second.dims;
  }

  void AddConcat() {
    std::vector<Value> inputs;
    std::vector<armnn::TensorShape> shapes;
    for (int k = 0; k < node_->input_size(); ++k) {
      inputs.push_back(Operand(k));
      shapes.push_back(inputs.back().slot->GetTensorInfo().GetShape());
    }
    if (inputs.empty()) Fail("no inputs");
    const int64_t rank = static_cast<int64_t>(inputs[0].dims.size());
    int64_t axis = Int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) Fail("axis out of range");
    if (inputs.size() == 1) return Record(inputs[0]);
    for (const Value& v : inputs) {
      bool match = v.dims.size() == inputs[0].dims.size();
      for (size_t k = 0; match && k < v.dims.size(); ++k) {
        match = static_cast<int64_t>(k) == axis || v.dims[k] == inputs[0].dims[k];
      }
      if (!match)
        Fail("inputs " + DimsText(inputs[0].dims) + " and " + DimsText(v.dims) +
             " cannot be concatenated");
    }
    const armnn::OriginsDescriptor d = armnn::CreateDescriptorForConcatenation(
        shapes.begin(), shapes.end(), static_cast<unsigned int>(axis));
    Finish(net_->AddConcatLayer(d, Name().c_str()), inputs);
  }

  void AddSoftmax() {
    const Value x = Operand(0);
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = Int("axis", opset_ >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) Fail("axis out of range");
    armnn::SoftmaxDescriptor d;
    d.m_Beta = 1.0f;
    d.m_Axis = -1;
    if (axis == rank - 1) return (void)Finish(net_->AddSoftmaxLayer(d, Name().c_str()), {x});
    if (opset_ >= 13)
      Fail("Softmax over an axis other than the last is not supported", StatusCode::kUnimplemented);
    // Before opset 13 Softmax normalizes over all axes from `axis` on: a
    // softmax over the last axis of the input reshaped to 2-D.
    const int64_t outer = Elements(Dims(x.dims.begin(), x.dims.begin() + axis));
    const Value flat = Reshape(x, {outer, Elements(x.dims) / outer}, "/flatten");
    const Value y = Finish(net_->AddSoftmaxLayer(d, Name().c_str()), {flat}, 0, false);
    Record(Reshape(y, x.dims, "/unflatten"));
  }

  void AddReshape() {
    const Value x = Operand(0);
    Dims shape;
    if (opset_ < 5) {
      shape = Ints("shape", {});
    } else {
      const Constant& s = Const(1);
      if (s.is_float) Fail("shape must be int64");
      shape = s.i;
    }
    const bool allow_zero = Int("allowzero", 0) != 0;
    int64_t infer = -1;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 0 && !allow_zero) {
        if (k >= x.dims.size()) Fail("shape " + DimsText(shape) + ": 0 beyond the input rank");
        shape[k] = x.dims[k];
      }
      if (shape[k] == -1) {
        if (infer >= 0) Fail("shape " + DimsText(shape) + " has two -1");
        infer = static_cast<int64_t>(k);
      } else if (shape[k] < 0) {
        Fail("shape " + DimsText(shape) + " has a negative dimension");
      }
    }
    if (infer >= 0) {
      Dims rest = shape;
      rest[static_cast<size_t>(infer)] = 1;
      const int64_t known = Elements(rest);
      if (known > 0) shape[static_cast<size_t>(infer)] = Elements(x.dims) / known;
    }
    if (Elements(shape) != Elements(x.dims)) {
      Fail("cannot reshape " + DimsText(x.dims) + " to " + DimsText(shape));
    }
    Record(Reshape(x, shape, ""));
  }

  void AddFlatten() {
    const Value x = Operand(0);
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = Int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) Fail("axis out of range");
    const int64_t outer = Elements(Dims(x.dims.begin(), x.dims.begin() + axis));
    Record(Reshape(x, {outer, Elements(x.dims) / outer}, ""));
  }

  const onnx::ModelProto& model_;
  const KernelCall& call_;
  armnn::INetwork* net_;
  int64_t opset_ = 0;
  const onnx::NodeProto* node_ = nullptr;
  std::string node_label_;
  std::unordered_map<std::string, Constant> constants_;
  std::unordered_map<std::string, Value> values_;
  std::set<armnn::LayerGuid> input_layers_;
};

// ---------------------------------------------------------------------------
// Plugin state: one Arm NN runtime, one loaded network per Subgraph node.

// Shared: an eval holds its own reference, so a second Executor::Init on the
// same plan bytes (same node pointers) that prepares the node again replaces
// the entry without freeing a network an eval is running; the old network is
// unloaded when its last eval returns.
struct NodeState {
  armnn::IRuntime* runtime = nullptr;  // set once loaded; the runtime is never destroyed
  armnn::NetworkId id = 0;
  std::vector<armnn::TensorInfo> inputs;
  std::vector<armnn::TensorInfo> outputs;
  // Evals of one state are serialized: two executors of the same plan may run
  // the node at once.
  std::mutex eval_mutex;

  NodeState() = default;
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;
  ~NodeState() {
    if (runtime != nullptr) runtime->UnloadNetwork(id);
  }
};

struct Plugin {
  std::mutex mutex;
  ArmnnOptions options;
  armnn::IRuntimePtr runtime{nullptr, &armnn::IRuntime::Destroy};
  std::unordered_map<const schema::Node*, std::shared_ptr<NodeState>> nodes;
  // Messages of failed prepares and evals, by node: Status holds a pointer to
  // them (unordered_map never moves its values).
  std::unordered_map<const schema::Node*, std::string> errors;
  std::unordered_map<const schema::Node*, std::string> eval_errors;
};

// Never destroyed: Arm NN's runtime must not be torn down during static
// destruction (its dynamic backends may already be unloaded).
Plugin& State() {
  static Plugin* const plugin = new Plugin();
  return *plugin;
}

Status PrepareError(Plugin& p, const schema::Node* node, StatusCode code, const std::string& what) {
  std::string& text = p.errors[node];
  text = "armnn: " + what;
  return Status(code, text.c_str());
}

// Drops the plugin's reference; the network unloads with the last one.
void Unload(Plugin& p, const schema::Node* node) { p.nodes.erase(node); }

std::vector<armnn::BackendId> Backends(const Plugin& p, const CustomAttributes& attrs) {
  std::vector<armnn::BackendId> backends;
  if (const schema::Attribute* a = attrs.Find("backends")) {
    if (a->kind() != schema::AttributeKind::Strings || !a->strings() || a->strings()->size() == 0) {
      Fail("attribute 'backends' must be a non-empty list of strings");
    }
    for (const auto* s : *a->strings()) backends.emplace_back(s->str());
  } else {
    for (const std::string& s : p.options.default_backends) backends.emplace_back(s);
    if (backends.empty()) backends.emplace_back("CpuRef");
  }
  return backends;
}

Status PrepareLocked(Plugin& p, const KernelCall& call) {
  Unload(p, call.node);
  try {
    CustomAttributes attrs;
    const Status loaded = CustomAttributes::Load(*call.node, &attrs);
    if (!loaded.ok()) return PrepareError(p, call.node, loaded.code(), loaded.message());
    CustomAttributes::TensorValue model_bytes;
    if (!attrs.Tensor("model", &model_bytes) || model_bytes.dtype != DType::UInt8 ||
        model_bytes.rank != 1) {
      return PrepareError(
          p, call.node, StatusCode::kInvalidArgument,
          "Subgraph node needs attribute 'model' (1-D uint8 tensor: an ONNX ModelProto)");
    }
    onnx::ModelProto model;
    if (model_bytes.bytes > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !model.ParseFromArray(model_bytes.data, static_cast<int>(model_bytes.bytes))) {
      return PrepareError(p, call.node, StatusCode::kInvalidArgument,
                          "attribute 'model' is not a valid ONNX ModelProto");
    }
    const std::vector<armnn::BackendId> backends = Backends(p, attrs);

    armnn::INetworkPtr net = armnn::INetwork::Create();
    NetworkBuilder(model, call, net.get()).Build();

    if (!p.runtime) {
      armnn::IRuntime::CreationOptions options;
      options.m_DynamicBackendsPath = p.options.dynamic_backends_path;
      p.runtime = armnn::IRuntime::Create(options);
    }
    std::vector<std::string> messages;
    armnn::IOptimizedNetworkPtr optimized{nullptr, nullptr};
    try {
      optimized =
          armnn::Optimize(*net, backends, p.runtime->GetDeviceSpec(), armnn::OptimizerOptions(),
                          armnn::Optional<std::vector<std::string>&>(messages));
    } catch (const armnn::Exception& e) {
      std::string what = std::string("Optimize for backends");
      for (const auto& b : backends) what += " " + b.Get();
      what += " failed: ";
      what += e.what();
      for (const std::string& m : messages) what += "; " + m;
      return PrepareError(p, call.node, StatusCode::kUnimplemented, what);
    }
    if (!optimized) {
      std::string what = "Optimize failed";
      for (const std::string& m : messages) what += "; " + m;
      return PrepareError(p, call.node, StatusCode::kUnimplemented, what);
    }
    auto state = std::make_shared<NodeState>();
    std::string load_error;
    if (p.runtime->LoadNetwork(state->id, std::move(optimized), load_error) !=
        armnn::Status::Success) {
      return PrepareError(p, call.node, StatusCode::kInternal, "LoadNetwork failed: " + load_error);
    }
    state->runtime = p.runtime.get();
    for (uint32_t i = 0; i < call.num_inputs; ++i) {
      state->inputs.push_back(p.runtime->GetInputTensorInfo(state->id, static_cast<int>(i)));
    }
    for (uint32_t i = 0; i < call.num_outputs; ++i) {
      state->outputs.push_back(p.runtime->GetOutputTensorInfo(state->id, static_cast<int>(i)));
    }
    p.nodes[call.node] = std::move(state);
    p.errors.erase(call.node);
    return Status::Ok();
  } catch (const BuildError& e) {
    return PrepareError(p, call.node, e.code, e.what());
  } catch (const armnn::Exception& e) {
    return PrepareError(p, call.node, StatusCode::kInternal, std::string("Arm NN: ") + e.what());
  } catch (const std::exception& e) {
    return PrepareError(p, call.node, StatusCode::kInternal, e.what());
  }
}

// Nothing may escape into the runtime: Unload and the error text itself may
// throw (Arm NN, std::bad_alloc).
Status Prepare(const KernelCall& call) {
  Plugin& p = State();
  std::lock_guard<std::mutex> lock(p.mutex);
  try {
    return PrepareLocked(p, call);
  } catch (...) {
    return BATON_ERROR(kInternal, "armnn: prepare failed (exception while reporting an error)");
  }
}

Status Eval(const KernelCall& call) {
  Plugin& p = State();
  std::shared_ptr<NodeState> state;
  try {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.nodes.find(call.node);
    if (it != p.nodes.end()) state = it->second;
  } catch (...) {
    return BATON_ERROR(kInternal, "armnn: eval failed (lock)");
  }
  if (state == nullptr) return BATON_ERROR(kFailedPrecondition, "armnn: node was not prepared");
  armnn::IRuntime* const runtime = state->runtime;
  try {
    std::lock_guard<std::mutex> eval_lock(state->eval_mutex);
    armnn::InputTensors inputs;
    armnn::OutputTensors outputs;
    for (uint32_t i = 0; i < call.num_inputs; ++i) {
      inputs.emplace_back(static_cast<armnn::LayerBindingId>(i),
                          armnn::ConstTensor(state->inputs[i], call.inputs[i].data));
    }
    for (uint32_t i = 0; i < call.num_outputs; ++i) {
      outputs.emplace_back(static_cast<armnn::LayerBindingId>(i),
                           armnn::Tensor(state->outputs[i], call.outputs[i].data));
    }
    if (runtime->EnqueueWorkload(state->id, inputs, outputs) != armnn::Status::Success) {
      return BATON_ERROR(kInternal, "armnn: EnqueueWorkload failed");
    }
    return Status::Ok();
  } catch (const std::exception& e) {
    try {
      // Kept by the plugin, not the state: the Status may outlive this
      // eval's reference to the state.
      std::lock_guard<std::mutex> lock(p.mutex);
      std::string& text = p.eval_errors[call.node];
      text = std::string("armnn: ") + e.what();
      return Status(StatusCode::kInternal, text.c_str());
    } catch (...) {
      return BATON_ERROR(kInternal, "armnn: eval failed");
    }
  } catch (...) {
    return BATON_ERROR(kInternal, "armnn: eval failed (unknown exception)");
  }
}

}  // namespace

Status RegisterArmnnRuntime(KernelRegistry* registry, DeviceKind kind, ArmnnOptions options) {
  if (registry == nullptr) return BATON_ERROR(kInvalidArgument, "null registry");
  {
    Plugin& p = State();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.options = std::move(options);
  }
  return registry->RegisterCustom("armnn", kind, Kernel{Prepare, Eval});
}

void ReleaseArmnnNetworks() {
  Plugin& p = State();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.nodes.clear();  // each network unloads with its last reference
  p.errors.clear();
  p.eval_errors.clear();
}

size_t ArmnnLoadedNetworks() {
  Plugin& p = State();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.nodes.size();
}

}  // namespace baton
