#pragma once
// Registration of the reference kernels, one family (source file) at a time,
// as in TFLM: each family file (conv.cc, pool.cc, ...) keeps its kernel
// functions file-local and ends with a constant-initialized table, one row
// per op it serves. registry_reference.cc walks the families listed in
// BATON_KERNEL_FAMILIES for RegisterReferenceKernels and WorkspaceBytes.
// Internal to baton_kernels.
//
// Dtypes are not part of a row: a family serves the dtypes its prepare
// accepts and rejects the others at load time (most families: float32 only;
// the layout families: any dtype).
//
// Adding a kernel:
//   - an op of an existing family: write its prepare/eval (and workspace rule)
//     in the family's file and add a row to the table at its end;
//   - a new family: a new `<family>.cc` ending with
//       constexpr KernelEntry kEntries[] = {{Op::X, kAllDeviceKinds, ...}};
//       BATON_KERNEL_FAMILY(Name, kEntries);
//     and `X(Name)` in BATON_KERNEL_FAMILIES below.
// Every op needs exactly one row over all families (a second row would
// silently replace the first at registration). BATON_KERNEL_FAMILY checks a
// family's own rows at compile time; tests/kernels/registry_reference_test.cc
// checks that every schema::Op has one row in all and a kernel for every
// device kind.
//
// Tables are constexpr POD (no global constructors); nothing here allocates.

#include <stddef.h>
#include <stdint.h>

#include "baton/kernels.h"

namespace baton {
namespace kernels {

using WorkspaceFn = size_t (*)(const KernelCall& call);

// One bit per DeviceKind (bit k: DeviceKind k).
using DeviceKindMask = uint8_t;
static_assert(kNumDeviceKinds <= 8, "DeviceKindMask holds one bit per DeviceKind");
inline constexpr DeviceKindMask kAllDeviceKinds =
    static_cast<DeviceKindMask>((1u << kNumDeviceKinds) - 1);

// One op of a family.
struct KernelEntry {
  Op op;
  DeviceKindMask kinds;  // device kinds the kernel is registered for
  KernelFn prepare;      // checks dtypes, shapes, params, workspace
  KernelFn eval;
  WorkspaceFn workspace;  // null: the op needs no workspace
};

// A family's table.
struct KernelFamily {
  const KernelEntry* entries;
  uint32_t count;
};

// Every family, one line each: X(Name) refers to k<Name>Family, defined by
// BATON_KERNEL_FAMILY(Name, ...) in the family's file.
#define BATON_KERNEL_FAMILIES(X) \
  X(Copy)                        \
  X(Conv)                        \
  X(Gemm)                        \
  X(MatMul)                      \
  X(Elementwise)                 \
  X(Activation)                  \
  X(Softmax)                     \
  X(Pool)                        \
  X(Reduce)                      \
  X(BatchNorm)                   \
  X(ConcatSplit)                 \
  X(Slice)                       \
  X(Pad)                         \
  X(Transpose)                   \
  X(Gather)                      \
  X(Logic)                       \
  X(CastExpand)                  \
  X(Tile)                        \
  X(ConvTranspose)               \
  X(Resize)                      \
  X(Norm)                        \
  X(Rnn)                         \
  X(Quant)                       \
  X(QLinear)                     \
  X(QPool)                       \
  X(QInteger)

#define BATON_DECLARE_KERNEL_FAMILY(name) extern const KernelFamily k##name##Family;
BATON_KERNEL_FAMILIES(BATON_DECLARE_KERNEL_FAMILY)
#undef BATON_DECLARE_KERNEL_FAMILY

// What can be checked within one family at compile time: every row has an
// eval, a valid op, device kinds, and an op no other row of the family has.
template <size_t N>
constexpr bool ValidFamily(const KernelEntry (&entries)[N]) {
  for (size_t i = 0; i < N; ++i) {
    const KernelEntry& e = entries[i];
    if (e.eval == nullptr || static_cast<uint32_t>(e.op) >= kNumOps) return false;
    if (e.kinds == 0 || (e.kinds & ~kAllDeviceKinds) != 0) return false;
    for (size_t j = 0; j < i; ++j) {
      if (entries[j].op == e.op) return false;
    }
  }
  return true;
}

// Defines k<name>Family over `entries` (a constexpr KernelEntry array), in
// namespace baton::kernels.
#define BATON_KERNEL_FAMILY(name, entries)                                               \
  static_assert(::baton::kernels::ValidFamily(entries),                                  \
                #name ": each row needs an eval, a valid op, device kinds, its own op"); \
  constexpr KernelFamily k##name##Family = {entries, sizeof(entries) / sizeof(entries[0])}

}  // namespace kernels
}  // namespace baton
