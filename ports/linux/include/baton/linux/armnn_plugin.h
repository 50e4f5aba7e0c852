#pragma once
// Arm NN as a foreign runtime for Subgraph nodes (library baton_armnn, built
// only when Arm NN is installed; docs/porting.md "Foreign runtimes").
//
// A Subgraph node whose CustomParams.name is "armnn" carries its region of
// the model as a serialized ONNX ModelProto (attribute "model", a 1-D uint8
// tensor) and optionally the Arm NN backends to try, in order (attribute
// "backends", strings; default ["CpuRef"]). Node input i is the model's i-th
// graph input that is not an initializer, node output i its i-th graph
// output; all float32, NCHW.
//
//   KernelRegistry registry;
//   RegisterReferenceKernels(&registry);
//   RegisterArmnnRuntime(&registry, DeviceKind::Npu);   // queues of kind npu
//   executor.Init(view, registry, &port, arenas, &error);
//
// prepare (Executor::Init, once per node) parses the model, builds an
// armnn::INetwork layer by layer (supported ONNX ops: Conv incl. depthwise,
// Gemm, MatMul with constant weights, BatchNormalization, Relu, Clip,
// Sigmoid, Tanh, LeakyRelu, HardSwish, MaxPool, AveragePool,
// GlobalAveragePool, GlobalMaxPool, Add, Sub, Mul, Div, Concat, Softmax,
// Reshape, Flatten, Constant, Identity; docs/porting.md), optimizes it
// for the backends and loads it into one Arm NN runtime shared by all nodes
// (created at the first prepare). Anything it cannot run (an unsupported op,
// a malformed model, shapes that do not match the node's tensors, a backend
// that rejects a layer) fails prepare with InvalidArgument or Unimplemented
// and a message naming the ONNX node and op. eval runs the loaded network
// synchronously on the node's tensors (EnqueueWorkload) on the calling queue
// thread; there is no asynchronous submit.
//
// Unlike the runtime core, this library uses the heap, exceptions and RTTI
// (Arm NN and protobuf need them); every Arm NN exception is caught at the
// kernel boundary and returned as a Status. Error messages are owned by the
// plugin and stay valid until the same node is prepared again or
// ReleaseArmnnNetworks is called.
//
// Thread safety: prepare and eval may run on any thread; plugin state is
// guarded by a mutex, and eval of different nodes runs concurrently. Each
// loaded network is reference-counted: preparing a node again (a second
// executor on the same plan bytes) never frees a network an eval is running,
// and evals of one network are serialized.

#include <string>
#include <vector>

#include "baton/kernels.h"
#include "baton/status.h"

namespace baton {

struct ArmnnOptions {
  // Backends for nodes without a "backends" attribute; empty means
  // {"CpuRef"}.
  std::vector<std::string> default_backends;
  // Where Arm NN looks for dynamic backends (Arm_CpuRef_backend.so, ...);
  // empty: Arm NN's built-in path. Takes effect when the shared runtime is
  // created, i.e. at the first prepare after the first registration.
  std::string dynamic_backends_path;
};

// Registers the "armnn" kernel for Subgraph nodes on queues of device kind
// `kind` (call once per kind). The latest registration's options apply.
Status RegisterArmnnRuntime(KernelRegistry* registry, DeviceKind kind, ArmnnOptions options = {});

// Unloads every network the plugin has loaded (e.g. after the executors
// that used them are gone). Not while any of them runs.
void ReleaseArmnnNetworks();

// Number of networks currently loaded (tests).
size_t ArmnnLoadedNetworks();

}  // namespace baton
