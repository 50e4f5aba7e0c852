#pragma once
// Hand-built plans for tests: a small fluent builder over FlatBufferBuilder.
//
//   PlanBuilder b;
//   uint32_t dram = b.Domain("dram", 4096);
//   uint32_t cpu = b.Queue("cpu0", schema::DeviceKind::Cpu, {dram});
//   uint32_t x = b.Tensor("x", {1, 16}, dram, 0);
//   uint32_t y = b.Tensor("y", {1, 16}, dram, 64);
//   b.Node("relu", schema::Op::Relu, cpu).In({x}).Out({y});
//   b.Inputs({x}).Outputs({y});
//   std::vector<uint8_t> bytes = b.Finish();
//
// Nodes are appended to their queue's program in creation order, so
// positions and the runtime's "increasing node index" rule hold by
// construction. Everything is stored as plain specs until Finish(), so specs
// can be edited (e.g. a wait removed) before building.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/plan_view.h"

namespace baton::testing {

class PlanBuilder {
 public:
  struct DomainSpec {
    std::string name;
    uint64_t bytes = 0;
    uint32_t alignment = 16;
  };
  struct QueueSpec {
    std::string name;
    schema::DeviceKind kind = schema::DeviceKind::Cpu;
    std::vector<uint32_t> domains;
    std::vector<uint32_t> nodes;
  };
  struct TensorSpec {
    std::string name;
    schema::DType dtype = schema::DType::Float32;
    std::vector<int64_t> shape;
    schema::Storage storage = schema::Storage::Arena;
    uint32_t domain = 0;
    uint64_t offset = 0;
    uint32_t slots = 1;
    uint64_t slot_stride = 0;
  };
  struct ConvSpec {
    bool present = false;
    std::vector<int32_t> kernel;
    int32_t group = 1;
  };
  struct NodeSpec {
    std::string name;
    schema::Op op = schema::Op::Identity;
    uint32_t queue = 0;
    uint32_t stage = 0;
    std::vector<int32_t> inputs;
    std::vector<uint32_t> outputs;
    std::vector<uint32_t> workspace;
    std::vector<schema::Wait> waits;
    ConvSpec conv;
  };

  // Fluent access to one node's spec.
  class NodeRef {
   public:
    NodeRef(PlanBuilder* b, uint32_t index) : b_(b), index_(index) {}
    NodeRef& In(std::vector<int32_t> ids) {
      spec().inputs = std::move(ids);
      return *this;
    }
    NodeRef& Out(std::vector<uint32_t> ids) {
      spec().outputs = std::move(ids);
      return *this;
    }
    NodeRef& Workspace(std::vector<uint32_t> ids) {
      spec().workspace = std::move(ids);
      return *this;
    }
    NodeRef& Stage(uint32_t stage) {
      spec().stage = stage;
      return *this;
    }
    NodeRef& Wait(uint32_t node, uint32_t lag = 0) {
      spec().waits.emplace_back(node, lag);
      return *this;
    }
    NodeRef& Conv(std::vector<int32_t> kernel, int32_t group = 1) {
      spec().conv = {true, std::move(kernel), group};
      return *this;
    }
    uint32_t id() const { return index_; }
    operator uint32_t() const { return index_; }  // NOLINT: fluent use

   private:
    NodeSpec& spec() { return b_->nodes[index_]; }
    PlanBuilder* b_;
    uint32_t index_;
  };

  static size_t DTypeBytes(schema::DType dtype) {
    switch (dtype) {
      case schema::DType::Float32:
      case schema::DType::Int32:
        return 4;
      case schema::DType::Int64:
        return 8;
      case schema::DType::UInt8:
      case schema::DType::Int8:
      case schema::DType::Bool:
        return 1;
    }
    return 0;
  }
  static uint64_t Bytes(const TensorSpec& t) {
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= static_cast<uint64_t>(d);
    return count * DTypeBytes(t.dtype);
  }

  PlanBuilder& Name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  PlanBuilder& InFlight(uint32_t d) {
    in_flight_ = d;
    return *this;
  }
  uint32_t Domain(std::string name, uint64_t bytes, uint32_t alignment = 16) {
    domains.push_back({std::move(name), bytes, alignment});
    return static_cast<uint32_t>(domains.size() - 1);
  }
  uint32_t Queue(std::string name, schema::DeviceKind kind, std::vector<uint32_t> domain_list) {
    queues.push_back({std::move(name), kind, std::move(domain_list), {}});
    return static_cast<uint32_t>(queues.size() - 1);
  }
  // An arena tensor; slot_stride 0 means the tensor's bytes rounded up to
  // the domain's alignment.
  uint32_t Tensor(std::string name, std::vector<int64_t> shape, uint32_t domain, uint64_t offset,
                  uint32_t slots = 1, uint64_t slot_stride = 0,
                  schema::DType dtype = schema::DType::Float32) {
    TensorSpec t;
    t.name = std::move(name);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.domain = domain;
    t.offset = offset;
    t.slots = slots;
    if (slot_stride == 0) {
      const uint64_t align = domains.at(domain).alignment;
      slot_stride = (Bytes(t) + align - 1) / align * align;
    }
    t.slot_stride = slot_stride;
    tensors.push_back(t);
    return static_cast<uint32_t>(tensors.size() - 1);
  }
  // A constant (zero-filled, 64-byte aligned in the constant section).
  uint32_t Constant(std::string name, std::vector<int64_t> shape,
                    schema::DType dtype = schema::DType::Float32) {
    TensorSpec t;
    t.name = std::move(name);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.storage = schema::Storage::Constant;
    t.offset = constants_bytes_;
    constants_bytes_ += (Bytes(t) + 63) / 64 * 64;
    tensors.push_back(t);
    return static_cast<uint32_t>(tensors.size() - 1);
  }
  NodeRef Node(std::string name, schema::Op op, uint32_t queue) {
    NodeSpec n;
    n.name = std::move(name);
    n.op = op;
    n.queue = queue;
    nodes.push_back(n);
    const uint32_t index = static_cast<uint32_t>(nodes.size() - 1);
    queues.at(queue).nodes.push_back(index);
    return NodeRef(this, index);
  }
  NodeRef node(uint32_t index) { return NodeRef(this, index); }
  PlanBuilder& Inputs(std::vector<uint32_t> list) {
    inputs = std::move(list);
    return *this;
  }
  PlanBuilder& Outputs(std::vector<uint32_t> list) {
    outputs = std::move(list);
    return *this;
  }

  std::vector<uint8_t> Finish() const {
    namespace s = schema;
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<s::Domain>> domain_offsets;
    for (const DomainSpec& d : domains) {
      domain_offsets.push_back(s::CreateDomainDirect(fbb, d.name.c_str(), d.bytes, d.alignment));
    }
    std::vector<flatbuffers::Offset<s::Queue>> queue_offsets;
    for (const QueueSpec& q : queues) {
      queue_offsets.push_back(
          s::CreateQueueDirect(fbb, q.name.c_str(), q.kind, &q.domains, &q.nodes));
    }
    std::vector<flatbuffers::Offset<s::Tensor>> tensor_offsets;
    for (const TensorSpec& t : tensors) {
      tensor_offsets.push_back(s::CreateTensorDirect(fbb, t.name.c_str(), t.dtype, &t.shape,
                                                     Bytes(t), t.storage, t.domain, t.offset,
                                                     t.slots, t.slot_stride));
    }
    std::vector<flatbuffers::Offset<s::Node>> node_offsets;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      const NodeSpec& spec = nodes[n];
      uint32_t position = 0;
      const std::vector<uint32_t>& program = queues.at(spec.queue).nodes;
      for (uint32_t p = 0; p < program.size(); ++p) {
        if (program[p] == n) position = p;
      }
      s::Params params_type = s::Params::NONE;
      flatbuffers::Offset<void> params = 0;
      if (spec.conv.present) {
        params_type = s::Params::ConvParams;
        params = s::CreateConvParamsDirect(fbb, &spec.conv.kernel, nullptr, nullptr, nullptr,
                                           spec.conv.group)
                     .Union();
      }
      node_offsets.push_back(s::CreateNodeDirect(
          fbb, spec.name.c_str(), spec.op, spec.queue, position, spec.stage, &spec.inputs,
          &spec.outputs, &spec.workspace, &spec.waits, params_type, params));
    }
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> constants = 0;
    if (constants_bytes_ > 0) {
      std::vector<uint8_t> constant_bytes(constants_bytes_, 0);
      // 32 is FlatBuffers' largest alignment (the schema's 64 asserts in debug
      // builds); the runtime needs 16.
      fbb.ForceVectorAlignment(constant_bytes.size(), sizeof(uint8_t), 32);
      constants = fbb.CreateVector(constant_bytes);
    }
    auto plan = s::CreatePlan(fbb, kPlanFormatVersion, fbb.CreateString(name_), in_flight_,
                              fbb.CreateVector(domain_offsets), fbb.CreateVector(queue_offsets),
                              fbb.CreateVector(tensor_offsets), fbb.CreateVector(node_offsets),
                              fbb.CreateVector(inputs), fbb.CreateVector(outputs), constants);
    s::FinishPlanBuffer(fbb, plan);
    std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    AppendPlanTrailer(&bytes);
    return bytes;
  }

  // Specs, public so tests can edit them before Finish().
  std::vector<DomainSpec> domains;
  std::vector<QueueSpec> queues;
  std::vector<TensorSpec> tensors;
  std::vector<NodeSpec> nodes;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;

 private:
  std::string name_ = "test";
  uint32_t in_flight_ = 1;
  uint64_t constants_bytes_ = 0;
};

}  // namespace baton::testing
