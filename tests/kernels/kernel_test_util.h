#pragma once
// Test and benchmark harness for one kernel invocation: describes tensors and
// a node, serializes them as a one-node plan with flatbuffers, sizes and
// allocates the workspace through baton::WorkspaceBytes, and runs the
// registered reference kernel's prepare and eval. Host only (uses the heap);
// no gtest dependency so the benchmarks can share it.

#include <stdint.h>
#include <string.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baton/kernels.h"
#include "baton/plan_generated.h"
#include "flatbuffers/flatbuffers.h"

namespace baton {
namespace testing {

using ParamsFn = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

// Restores the kernels' instruction set on scope exit (tests that select one
// also restore it when an assertion returns early).
struct IsaGuard {
  KernelIsa saved = ActiveKernelIsa();
  ~IsaGuard() { SelectKernelIsa(saved); }
};

class KernelHarness {
 public:
  KernelHarness() { RegisterReferenceKernels(&registry_).IgnoreError(); }

  // Declares a tensor and allocates (zeroed) storage for it; returns its id.
  int AddTensor(schema::DType dtype, std::vector<int64_t> shape) {
    Spec s;
    s.dtype = dtype;
    s.shape = std::move(shape);
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    s.bytes = static_cast<size_t>(n) * DTypeSize(dtype);
    // Exactly the tensor's size (rounded to 8 bytes) so ASan sees overruns.
    s.storage.assign(s.bytes == 0 ? 1 : (s.bytes + 7) / 8, 0);
    specs_.push_back(std::move(s));
    return static_cast<int>(specs_.size()) - 1;
  }

  // The node: op, input ids (-1 = absent optional input), output ids, params.
  void SetNode(schema::Op op, std::vector<int> inputs, std::vector<int> outputs,
               schema::Params params_type = schema::Params::NONE, ParamsFn params = nullptr) {
    op_ = op;
    inputs_ = std::move(inputs);
    outputs_ = std::move(outputs);
    params_type_ = params_type;
    params_ = std::move(params);
  }

  void* Data(int id) { return specs_[static_cast<size_t>(id)].storage.data(); }
  float* F32(int id) { return static_cast<float*>(Data(id)); }
  size_t Bytes(int id) const { return specs_[static_cast<size_t>(id)].bytes; }
  int64_t Elements(int id) const {
    return static_cast<int64_t>(Bytes(id) / DTypeSize(specs_[static_cast<size_t>(id)].dtype));
  }
  void SetF32(int id, const std::vector<float>& v) {
    memcpy(Data(id), v.data(), v.size() * sizeof(float));
  }
  void SetBytes(int id, const void* src, size_t n) { memcpy(Data(id), src, n); }
  std::vector<float> GetF32(int id) { return std::vector<float>(F32(id), F32(id) + Elements(id)); }
  // Makes tensor `alias` share `target`'s storage (in-place execution).
  void Alias(int alias, int target) { alias_[alias] = target; }

  // Forces the workspace size (bytes; -1 = ask WorkspaceBytes).
  void OverrideWorkspace(int64_t bytes) { workspace_override_ = bytes; }
  size_t workspace_bytes() const { return workspace_bytes_; }

  // Builds the node (twice: once to ask WorkspaceBytes, once with the
  // workspace tensor) and runs the kernel's prepare on data-less arguments.
  Status Prepare() {
    Build(0);
    const KernelCall probe = MakeCall(false);
    workspace_bytes_ =
        workspace_override_ >= 0 ? static_cast<size_t>(workspace_override_) : WorkspaceBytes(probe);
    Build(workspace_bytes_);
    kernel_ = registry_.Find(op_, schema::DeviceKind::Cpu);
    if (kernel_ == nullptr) return BATON_ERROR(kUnimplemented, "no kernel registered");
    // The workspace buffer: 16-byte aligned (std::max_align_t), poisoned.
    workspace_.assign(workspace_bytes_ == 0 ? 1 : (workspace_bytes_ + 7) / 8,
                      0x7ff4dead7ff4deadull);
    if (kernel_->prepare == nullptr) return Status::Ok();
    return kernel_->prepare(MakeCall(false));
  }

  // Runs eval (after a successful Prepare).
  Status Eval() { return kernel_->eval(MakeCall(true)); }

  const schema::Node* node() const { return plan_->nodes()->Get(0); }

 private:
  struct Spec {
    schema::DType dtype = schema::DType::Float32;
    std::vector<int64_t> shape;
    size_t bytes = 0;
    std::vector<uint64_t> storage;
  };

  void Build(size_t workspace_bytes) {
    fbb_.Clear();
    std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
    for (size_t i = 0; i < specs_.size(); ++i) {
      const std::string name = "t" + std::to_string(i);
      tensors.push_back(schema::CreateTensorDirect(fbb_, name.c_str(), specs_[i].dtype,
                                                   &specs_[i].shape, specs_[i].bytes));
    }
    std::vector<uint32_t> ws;
    if (workspace_bytes > 0) {
      const std::vector<int64_t> shape{static_cast<int64_t>(workspace_bytes)};
      ws.push_back(static_cast<uint32_t>(tensors.size()));
      tensors.push_back(schema::CreateTensorDirect(fbb_, "workspace", schema::DType::UInt8, &shape,
                                                   workspace_bytes));
    }
    flatbuffers::Offset<void> params = 0;
    if (params_) params = params_(fbb_);
    std::vector<uint32_t> outs(outputs_.begin(), outputs_.end());
    auto node = schema::CreateNodeDirect(fbb_, "node", op_, 0, 0, 0, &inputs_, &outs, &ws, nullptr,
                                         params_ ? params_type_ : schema::Params::NONE, params);
    std::vector<flatbuffers::Offset<schema::Node>> nodes{node};
    auto plan = schema::CreatePlanDirect(fbb_, 1, "test", 1, nullptr, nullptr, &tensors, &nodes);
    schema::FinishPlanBuffer(fbb_, plan);
    plan_ = schema::GetPlan(fbb_.GetBufferPointer());
  }

  TensorArg Arg(int id, bool with_data) {
    TensorArg a;
    if (id < 0) return a;
    a.tensor = plan_->tensors()->Get(static_cast<uint32_t>(id));
    if (with_data) {
      auto it = alias_.find(id);
      a.data = Data(it == alias_.end() ? id : it->second);
    }
    return a;
  }

  KernelCall MakeCall(bool with_data) {
    in_args_.clear();
    out_args_.clear();
    ws_args_.clear();
    for (int id : inputs_) in_args_.push_back(Arg(id, with_data));
    for (int id : outputs_) out_args_.push_back(Arg(id, with_data));
    const auto* ws = plan_->nodes()->Get(0)->workspace();
    if (ws && ws->size() > 0) {
      TensorArg a;
      a.tensor = plan_->tensors()->Get(ws->Get(0));
      if (with_data) a.data = workspace_.data();
      ws_args_.push_back(a);
    }
    KernelCall call;
    call.node = plan_->nodes()->Get(0);
    call.inputs = in_args_.data();
    call.num_inputs = static_cast<uint32_t>(in_args_.size());
    call.outputs = out_args_.data();
    call.num_outputs = static_cast<uint32_t>(out_args_.size());
    call.workspace = ws_args_.empty() ? nullptr : ws_args_.data();
    call.num_workspace = static_cast<uint32_t>(ws_args_.size());
    return call;
  }

  KernelRegistry registry_;
  std::vector<Spec> specs_;
  std::map<int, int> alias_;
  schema::Op op_ = schema::Op::Copy;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  schema::Params params_type_ = schema::Params::NONE;
  ParamsFn params_;
  int64_t workspace_override_ = -1;
  size_t workspace_bytes_ = 0;
  std::vector<uint64_t> workspace_;
  flatbuffers::FlatBufferBuilder fbb_;
  const schema::Plan* plan_ = nullptr;
  const Kernel* kernel_ = nullptr;
  std::vector<TensorArg> in_args_, out_args_, ws_args_;
};

}  // namespace testing
}  // namespace baton
