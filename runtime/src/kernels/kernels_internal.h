#pragma once
// Entry points of every reference kernel, one group per source file, for the
// registration table in registry_reference.cc. Internal to baton_kernels.

#include <stddef.h>

#include "baton/kernels.h"

namespace baton {
namespace kernels {

// conv.cc
Status ConvPrepare(const KernelCall& call);
Status ConvEval(const KernelCall& call);
size_t ConvWorkspaceBytes(const KernelCall& call);

// gemm.cc
Status GemmPrepare(const KernelCall& call);
Status GemmEval(const KernelCall& call);
size_t GemmOpWorkspaceBytes(const KernelCall& call);

// matmul.cc
Status MatMulPrepare(const KernelCall& call);
Status MatMulEval(const KernelCall& call);
size_t MatMulWorkspaceBytes(const KernelCall& call);

// elementwise.cc: Add Sub Mul Div with numpy broadcasting.
Status BinaryPrepare(const KernelCall& call);
Status AddEval(const KernelCall& call);
Status SubEval(const KernelCall& call);
Status MulEval(const KernelCall& call);
Status DivEval(const KernelCall& call);

// activation.cc
Status UnaryPrepare(const KernelCall& call);       // Relu Sigmoid Tanh HardSwish
Status ActivationPrepare(const KernelCall& call);  // + requires ActivationParams
Status ReluEval(const KernelCall& call);
Status LeakyReluEval(const KernelCall& call);
Status ClipEval(const KernelCall& call);
Status SigmoidEval(const KernelCall& call);
Status TanhEval(const KernelCall& call);
Status HardSigmoidEval(const KernelCall& call);
Status HardSwishEval(const KernelCall& call);

// softmax.cc
Status SoftmaxPrepare(const KernelCall& call);
Status SoftmaxEval(const KernelCall& call);

// pool.cc
Status PoolPrepare(const KernelCall& call);
Status MaxPoolEval(const KernelCall& call);
Status AveragePoolEval(const KernelCall& call);
Status GlobalPoolPrepare(const KernelCall& call);
Status GlobalAveragePoolEval(const KernelCall& call);
Status GlobalMaxPoolEval(const KernelCall& call);

// reduce.cc
Status ReduceMeanPrepare(const KernelCall& call);
Status ReduceMeanEval(const KernelCall& call);

// batchnorm.cc
Status BatchNormPrepare(const KernelCall& call);
Status BatchNormEval(const KernelCall& call);

// copy.cc: Copy Reshape Flatten Squeeze Unsqueeze Identity (byte copies).
Status CopyPrepare(const KernelCall& call);
Status CopyEval(const KernelCall& call);

// concat_split.cc
Status ConcatPrepare(const KernelCall& call);
Status ConcatEval(const KernelCall& call);
Status SplitPrepare(const KernelCall& call);
Status SplitEval(const KernelCall& call);

// slice.cc
Status SlicePrepare(const KernelCall& call);
Status SliceEval(const KernelCall& call);

// pad.cc
Status PadPrepare(const KernelCall& call);
Status PadEval(const KernelCall& call);

// transpose.cc
Status TransposePrepare(const KernelCall& call);
Status TransposeEval(const KernelCall& call);

// gather.cc
Status GatherPrepare(const KernelCall& call);
Status GatherEval(const KernelCall& call);

}  // namespace kernels
}  // namespace baton
