#pragma once
// Builds small plans by hand with flatbuffers::FlatBufferBuilder, for tests
// that must not depend on the planner (cross builds run them on aarch64).
//
//   PlanBuilder b;
//   uint32_t dram = b.Domain("dram", 256);
//   uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
//   uint32_t x = b.Arena("x", {1, 4}, dram, 0);
//   uint32_t y = b.Arena("y", {1, 4}, dram, 16);
//   b.Node("relu", Op::Relu, cpu, {x}, {y});
//   b.Inputs({x}); b.Outputs({y});
//   AlignedPlan plan = b.Finish();   // 16-byte aligned bytes
//
// Nodes join their queue's program in the order they are added (so node
// indices increase along every program, as the loader requires).

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/plan_view.h"
#include "flatbuffers/flatbuffers.h"

namespace baton::testing {

// Plan bytes at a 16-byte aligned address (PlanView::Load requires it).
class AlignedPlan {
 public:
  AlignedPlan() = default;
  explicit AlignedPlan(const uint8_t* data, size_t size)
      : storage_(static_cast<uint8_t*>(aligned_alloc(64, (size + 63) / 64 * 64))), size_(size) {
    memcpy(storage_.get(), data, size);
  }
  const uint8_t* data() const { return storage_.get(); }
  uint8_t* mutable_data() { return storage_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage_;
  size_t size_ = 0;
};

struct WaitSpec {
  uint32_t node;
  uint32_t lag;
};

class PlanBuilder {
 public:
  using DeviceKind = schema::DeviceKind;
  using Op = schema::Op;

  uint32_t Domain(const std::string& name, uint64_t bytes, uint32_t alignment = 16) {
    domains_.push_back(schema::CreateDomainDirect(fbb_, name.c_str(), bytes, alignment));
    return static_cast<uint32_t>(domains_.size() - 1);
  }

  // `threads`: Queue.threads (a CPU queue's threads per node).
  uint32_t Queue(const std::string& name, DeviceKind kind, std::vector<uint32_t> domains,
                 uint32_t threads = 1) {
    queues_.push_back({name, kind, std::move(domains), {}, threads});
    return static_cast<uint32_t>(queues_.size() - 1);
  }

  // A float32 (by default) arena tensor.
  uint32_t Arena(const std::string& name, std::vector<int64_t> shape, uint32_t domain,
                 uint64_t offset, uint32_t slots = 1, uint64_t slot_stride = 0,
                 schema::DType dtype = schema::DType::Float32) {
    const uint64_t bytes = Bytes(shape, dtype);
    tensors_.push_back(schema::CreateTensorDirect(fbb_, name.c_str(), dtype, &shape, bytes,
                                                  schema::Storage::Arena, domain, offset, slots,
                                                  slots > 1 ? slot_stride : 0));
    return static_cast<uint32_t>(tensors_.size() - 1);
  }

  // A tensor built by the caller with fbb() (adversarial layouts).
  uint32_t AddTensor(flatbuffers::Offset<schema::Tensor> tensor) {
    tensors_.push_back(tensor);
    return static_cast<uint32_t>(tensors_.size() - 1);
  }

  // A float32 constant; its data is appended to the constant section
  // (64-byte aligned per tensor).
  uint32_t Constant(const std::string& name, std::vector<int64_t> shape,
                    const std::vector<float>& values) {
    while (constants_.size() % 64 != 0) constants_.push_back(0);
    const uint64_t offset = constants_.size();
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    constants_.insert(constants_.end(), bytes, bytes + values.size() * sizeof(float));
    tensors_.push_back(schema::CreateTensorDirect(fbb_, name.c_str(), schema::DType::Float32,
                                                  &shape, values.size() * sizeof(float),
                                                  schema::Storage::Constant, 0, offset, 1, 0));
    return static_cast<uint32_t>(tensors_.size() - 1);
  }

  // Adds a node at the end of `queue`'s program. Returns its index.
  uint32_t Node(const std::string& name, Op op, uint32_t queue, std::vector<int32_t> inputs,
                std::vector<uint32_t> outputs, std::vector<WaitSpec> waits = {}, uint32_t stage = 0,
                schema::Params params_type = schema::Params::NONE,
                flatbuffers::Offset<void> params = 0, std::vector<uint32_t> workspace = {}) {
    const uint32_t index = static_cast<uint32_t>(nodes_.size());
    const uint32_t position = static_cast<uint32_t>(queues_[queue].nodes.size());
    queues_[queue].nodes.push_back(index);
    std::vector<schema::Wait> w;
    for (const WaitSpec& s : waits) w.emplace_back(s.node, s.lag);
    nodes_.push_back(schema::CreateNodeDirect(fbb_, name.c_str(), op, queue, position, stage,
                                              &inputs, &outputs, &workspace, &w, params_type,
                                              params));
    return index;
  }

  // Appends `node` to `queue`'s program without touching the node (broken
  // programs: foreign, repeated or out-of-range entries).
  void ProgramEntry(uint32_t queue, uint32_t node) { queues_[queue].nodes.push_back(node); }

  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }
  void Inputs(std::vector<uint32_t> t) { inputs_ = std::move(t); }
  void Outputs(std::vector<uint32_t> t) { outputs_ = std::move(t); }
  void InFlight(uint32_t d) { in_flight_ = d; }
  void Version(uint32_t v) { version_ = v; }

  AlignedPlan Finish() {
    std::vector<flatbuffers::Offset<schema::Queue>> queues;
    for (const QueueSpec& q : queues_) {
      queues.push_back(
          schema::CreateQueueDirect(fbb_, q.name.c_str(), q.kind, &q.domains, &q.nodes, q.threads));
    }
    auto plan = schema::CreatePlanDirect(fbb_, version_, "test", in_flight_, &domains_, &queues,
                                         &tensors_, &nodes_, &inputs_, &outputs_,
                                         constants_.empty() ? nullptr : &constants_);
    schema::FinishPlanBuffer(fbb_, plan);
    std::vector<uint8_t> bytes(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
    AppendPlanTrailer(&bytes);
    return AlignedPlan(bytes.data(), bytes.size());
  }

  static uint64_t Bytes(const std::vector<int64_t>& shape, schema::DType dtype) {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n * DTypeSizeOf(dtype);
  }

 private:
  static uint64_t DTypeSizeOf(schema::DType dtype) {
    switch (dtype) {
      case schema::DType::Int64:
        return 8;
      case schema::DType::UInt8:
      case schema::DType::Int8:
      case schema::DType::Bool:
        return 1;
      default:
        return 4;
    }
  }
  struct QueueSpec {
    std::string name;
    DeviceKind kind;
    std::vector<uint32_t> domains;
    std::vector<uint32_t> nodes;
    uint32_t threads = 1;
  };
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<flatbuffers::Offset<schema::Domain>> domains_;
  std::vector<QueueSpec> queues_;
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<schema::Node>> nodes_;
  std::vector<uint32_t> inputs_;
  std::vector<uint32_t> outputs_;
  std::vector<uint8_t> constants_;
  uint32_t in_flight_ = 1;
  uint32_t version_ = kPlanFormatVersion;
};

}  // namespace baton::testing
