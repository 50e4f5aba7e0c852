// The table of reference kernels: one row per op with its prepare, eval and
// workspace functions. RegisterReferenceKernels and WorkspaceBytes both read
// it, so an op cannot be registered without its workspace rule.

#include "kernels_internal.h"

namespace baton {
namespace {

using WorkspaceFn = size_t (*)(const KernelCall& call);

struct Entry {
  Op op;
  KernelFn prepare;
  KernelFn eval;
  WorkspaceFn workspace;  // null: none
};

using namespace kernels;  // NOLINT(build/namespaces): the table below only

constexpr Entry kEntries[] = {
    {Op::Copy, CopyPrepare, CopyEval, nullptr},
    {Op::Conv, ConvPrepare, ConvEval, ConvWorkspaceBytes},
    {Op::Gemm, GemmPrepare, GemmEval, GemmOpWorkspaceBytes},
    {Op::MatMul, MatMulPrepare, MatMulEval, MatMulWorkspaceBytes},
    {Op::Add, BinaryPrepare, AddEval, nullptr},
    {Op::Sub, BinaryPrepare, SubEval, nullptr},
    {Op::Mul, BinaryPrepare, MulEval, nullptr},
    {Op::Div, BinaryPrepare, DivEval, nullptr},
    {Op::Relu, UnaryPrepare, ReluEval, nullptr},
    {Op::LeakyRelu, ActivationPrepare, LeakyReluEval, nullptr},
    {Op::Clip, ActivationPrepare, ClipEval, nullptr},
    {Op::Sigmoid, UnaryPrepare, SigmoidEval, nullptr},
    {Op::Tanh, UnaryPrepare, TanhEval, nullptr},
    {Op::HardSigmoid, ActivationPrepare, HardSigmoidEval, nullptr},
    {Op::HardSwish, UnaryPrepare, HardSwishEval, nullptr},
    {Op::Softmax, SoftmaxPrepare, SoftmaxEval, nullptr},
    {Op::MaxPool, PoolPrepare, MaxPoolEval, nullptr},
    {Op::AveragePool, PoolPrepare, AveragePoolEval, nullptr},
    {Op::GlobalAveragePool, GlobalPoolPrepare, GlobalAveragePoolEval, nullptr},
    {Op::GlobalMaxPool, GlobalPoolPrepare, GlobalMaxPoolEval, nullptr},
    {Op::ReduceMean, ReduceMeanPrepare, ReduceMeanEval, nullptr},
    {Op::BatchNormalization, BatchNormPrepare, BatchNormEval, nullptr},
    {Op::Concat, ConcatPrepare, ConcatEval, nullptr},
    {Op::Split, SplitPrepare, SplitEval, nullptr},
    {Op::Slice, SlicePrepare, SliceEval, nullptr},
    {Op::Pad, PadPrepare, PadEval, nullptr},
    {Op::Transpose, TransposePrepare, TransposeEval, nullptr},
    {Op::Reshape, CopyPrepare, CopyEval, nullptr},
    {Op::Flatten, CopyPrepare, CopyEval, nullptr},
    {Op::Squeeze, CopyPrepare, CopyEval, nullptr},
    {Op::Unsqueeze, CopyPrepare, CopyEval, nullptr},
    {Op::Gather, GatherPrepare, GatherEval, nullptr},
    {Op::Identity, CopyPrepare, CopyEval, nullptr},
};

static_assert(sizeof(kEntries) / sizeof(kEntries[0]) == kNumOps,
              "every op needs a reference kernel");

const Entry* FindEntry(Op op) {
  for (const Entry& e : kEntries) {
    if (e.op == op) return &e;
  }
  return nullptr;
}

}  // namespace

Status RegisterReferenceKernels(KernelRegistry* registry) {
  if (registry == nullptr) return BATON_ERROR(kInvalidArgument, "null kernel registry");
  for (const Entry& e : kEntries) {
    Kernel kernel;
    kernel.prepare = e.prepare;
    kernel.eval = e.eval;
    BATON_RETURN_IF_ERROR(registry->RegisterAllKinds(e.op, kernel));
  }
  return Status::Ok();
}

size_t WorkspaceBytes(const KernelCall& call) {
  if (call.node == nullptr) return 0;
  const Entry* e = FindEntry(call.node->op());
  return (e != nullptr && e->workspace != nullptr) ? e->workspace(call) : 0;
}

}  // namespace baton
