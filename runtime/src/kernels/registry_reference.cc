// RegisterReferenceKernels and WorkspaceBytes over the kernel families
// (kernel_family.h): both read the same rows, so an op cannot be registered
// without its workspace rule.

#include "kernel_family.h"

namespace baton {
namespace kernels {
namespace {

// A firmware that only runs known plans may compile this file into its own
// image with BATON_KERNEL_FAMILIES_USED(X) defined to the families those plans
// need (ports/cortex-m/demo/make_firmware_data.py --kernel-registry writes
// such a file): the families left out, and the code only they call, are then
// not linked. Default: every family.
#ifndef BATON_KERNEL_FAMILIES_USED
#define BATON_KERNEL_FAMILIES_USED BATON_KERNEL_FAMILIES
#endif

#define BATON_FAMILY_ADDRESS(name) &k##name##Family,
constexpr const KernelFamily* kFamilies[] = {BATON_KERNEL_FAMILIES_USED(BATON_FAMILY_ADDRESS)};
#undef BATON_FAMILY_ADDRESS

const KernelEntry* FindEntry(Op op) {
  for (const KernelFamily* family : kFamilies) {
    for (uint32_t i = 0; i < family->count; ++i) {
      if (family->entries[i].op == op) return &family->entries[i];
    }
  }
  return nullptr;
}

}  // namespace
}  // namespace kernels

Status RegisterReferenceKernels(KernelRegistry* registry) {
  if (registry == nullptr) return BATON_ERROR(kInvalidArgument, "null kernel registry");
  for (const kernels::KernelFamily* family : kernels::kFamilies) {
    for (uint32_t i = 0; i < family->count; ++i) {
      const kernels::KernelEntry& e = family->entries[i];
      Kernel kernel;
      kernel.prepare = e.prepare;
      kernel.eval = e.eval;
      for (uint32_t k = 0; k < kNumDeviceKinds; ++k) {
        if ((e.kinds >> k) & 1u) {
          BATON_RETURN_IF_ERROR(registry->Register(e.op, static_cast<DeviceKind>(k), kernel));
        }
      }
    }
  }
  return Status::Ok();
}

size_t WorkspaceBytes(const KernelCall& call) {
  if (call.node == nullptr) return 0;
  const kernels::KernelEntry* e = kernels::FindEntry(call.node->op());
  return (e != nullptr && e->workspace != nullptr) ? e->workspace(call) : 0;
}

}  // namespace baton
