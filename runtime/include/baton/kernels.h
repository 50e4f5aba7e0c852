#pragma once
// Kernel interface and registry.
//
// A kernel is a pair of plain functions keyed by (op, device kind):
//   prepare: runs once per node at load time, with TensorArg::data == nullptr.
//            It checks dtypes, shapes, parameters and workspace size, and
//            returns an error for anything it cannot run. Execution trusts it.
//   eval:    runs the node for one inference on resolved tensor addresses.
// Kernels never allocate: scratch memory is a planned workspace tensor of the
// node (see WorkspaceBytes below, which the planner calls to size it).
//
// Thread safety: prepare and eval are reentrant; eval may run concurrently for
// different nodes (or the same node and different inferences) on other queues.

#include <stddef.h>
#include <stdint.h>

#include "baton/config.h"
#include "baton/plan_generated.h"
#include "baton/status.h"

namespace baton {

using schema::DeviceKind;
using schema::DType;
using schema::Op;

// Size in bytes of one element, or 0 for an unknown dtype.
size_t DTypeSize(DType dtype);

// One tensor as a kernel sees it.
struct TensorArg {
  void* data = nullptr;                      // null at prepare, or absent input
  const schema::Tensor* tensor = nullptr;    // null for an absent optional input

  bool present() const { return tensor != nullptr; }
  DType dtype() const { return tensor->dtype(); }
  uint32_t rank() const { return tensor->shape() ? tensor->shape()->size() : 0; }
  int64_t dim(uint32_t i) const { return tensor->shape()->Get(i); }
  // Number of elements (1 for a scalar).
  int64_t elements() const;
  size_t bytes() const { return static_cast<size_t>(tensor->bytes()); }
  float* f32() const { return static_cast<float*>(data); }
};

// Everything one node invocation needs. Spans are valid for the call only.
struct KernelCall {
  const schema::Node* node = nullptr;
  const TensorArg* inputs = nullptr;
  uint32_t num_inputs = 0;
  const TensorArg* outputs = nullptr;
  uint32_t num_outputs = 0;
  const TensorArg* workspace = nullptr;
  uint32_t num_workspace = 0;
};

using KernelFn = Status (*)(const KernelCall& call);

struct Kernel {
  KernelFn prepare = nullptr;  // optional
  KernelFn eval = nullptr;
};

inline constexpr uint32_t kNumOps = static_cast<uint32_t>(Op::MAX) + 1;
inline constexpr uint32_t kNumDeviceKinds = static_cast<uint32_t>(DeviceKind::MAX) + 1;

// A fixed table: one kernel per (op, device kind), no heap, O(1) lookup;
// and up to kMaxCustomKernels kernels keyed by name for Custom and Subgraph
// nodes (their CustomParams.name), found by a linear search.
class KernelRegistry {
 public:
  // Replaces any kernel registered for the pair.
  Status Register(Op op, DeviceKind kind, Kernel kernel);
  // Registers `kernel` for every device kind.
  Status RegisterAllKinds(Op op, Kernel kernel);
  // Null when none is registered.
  const Kernel* Find(Op op, DeviceKind kind) const;

  // Registers the kernel of custom op `name` ("domain::op", as the plan's
  // CustomParams.name) on devices of `kind`, or of a foreign runtime ("armnn")
  // for Subgraph nodes. `name` is not copied: it must outlive the registry
  // (a string literal). A later registration of the same pair takes
  // precedence; ResourceExhausted after kMaxCustomKernels registrations.
  Status RegisterCustom(const char* name, DeviceKind kind, Kernel kernel);
  // The kernel that runs `node` on `kind`: by CustomParams.name for nodes
  // that carry CustomParams (Custom and Subgraph), by op otherwise. Null
  // when none is registered.
  const Kernel* Find(const schema::Node& node, DeviceKind kind) const;

 private:
  struct Named {
    const char* name;
    DeviceKind kind;
    Kernel kernel;
  };
  Kernel table_[kNumDeviceKinds][kNumOps] = {};
  Named custom_[kMaxCustomKernels] = {};
  uint32_t num_custom_ = 0;
};

// Registers Baton's float32 reference kernels (and Copy) for every device
// kind: the CPU runs them, simulated accelerators reuse them. Defined in the
// baton_kernels library.
Status RegisterReferenceKernels(KernelRegistry* registry);

// Workspace the reference kernel for `op` needs, given the node's parameters
// and tensor shapes (TensorArg::data unused). Zero when it needs none. The
// planner calls this to plan workspace tensors. Defined in baton_kernels.
size_t WorkspaceBytes(const KernelCall& call);

// True when a float Conv with a 3x3 kernel, stride 1, no dilation, one
// group, c input and m output channels and an oh x ow output takes
// Winograd F(2x2, 3x3) on every instruction set once its weights come
// transformed as input 4 (U, docs/formats.md): the layers whose weights
// `baton plan --winograd-weights` transforms. Defined in baton_kernels.
bool ConvTakesWinogradWeights(int64_t c, int64_t m, int64_t oh, int64_t ow);

// Instruction set of the GEMM-based reference kernels (Conv, Gemm, MatMul)
// and of the integer kernels compiled with them (QLinearConv, ...).
// Every build has kPortable: whatever its compiler flags target (SSE2 on a
// plain x86-64 build, NEON on aarch64, the FPU or soft float on Cortex-M).
// With BATON_KERNEL_DISPATCH (on by default for x86-64 host builds and for
// aarch64 builds), more copies are compiled beside it:
//  - x86-64: AVX2+FMA, AVX-512F and AVX-512 VNNI (F, BW, VNNI: the int8
//    kernels' vpdpbusd);
//  - aarch64: NEON with the dot-product extension (armv8.2-a+dotprod: the
//    int8 kernels' SDOT), where Linux reports it (HWCAP_ASIMDDP).
// At the first kernel call the widest one the CPU and OS support is chosen.
// Results of the copies agree to float rounding (they sum in the same order
// per output, FMA contracts differently); the integer kernels give identical
// bytes. Workspace sizes do not depend on the choice. Defined in baton_kernels.
enum class KernelIsa : uint8_t { kPortable, kAvx2, kAvx512, kAvx512Vnni, kNeonDot };

// Every KernelIsa, for loops over the levels (tests, `baton run --isa`).
inline constexpr KernelIsa kAllKernelIsas[] = {KernelIsa::kPortable, KernelIsa::kAvx2,
                                               KernelIsa::kAvx512, KernelIsa::kAvx512Vnni,
                                               KernelIsa::kNeonDot};

// "portable", "avx2", "avx512", "avx512vnni" or "neon_dotprod".
const char* KernelIsaName(KernelIsa isa);
// True when this build carries `isa` and the CPU can run it.
bool KernelIsaAvailable(KernelIsa isa);
// What the first kernel call selects: the widest available instruction set.
KernelIsa DefaultKernelIsa();
// The instruction set kernels use now (DefaultKernelIsa() until
// SelectKernelIsa is called).
KernelIsa ActiveKernelIsa();
// Makes later kernel calls use `isa` (for benchmarks, tests and `baton run
// --isa`); returns false and changes nothing when it is not available. Not
// for use while kernels run on other threads.
bool SelectKernelIsa(KernelIsa isa);

}  // namespace baton
