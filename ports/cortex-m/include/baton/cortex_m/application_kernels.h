#pragma once
// The hook through which a firmware image links the application's own
// kernels (custom ops, docs/porting.md "Custom ops"). When an image lists
// kernel sources (BATON_FIRMWARE_IMAGES `kernels:FILE.cc,...`,
// BATON_DEMO_KERNELS), demo/main.cc is compiled with
// BATON_APPLICATION_KERNELS=1 and calls this after the reference kernels and
// before Executor::Init; exactly one of those sources must define it. The
// rules of every kernel apply: no heap, no exceptions.

#include "baton/kernels.h"
#include "baton/status.h"

namespace baton {
namespace cortex_m {

// Registers the application's kernels (KernelRegistry::RegisterCustom).
Status RegisterApplicationKernels(KernelRegistry* registry);

}  // namespace cortex_m
}  // namespace baton
