#pragma once
// Kernel instruction sets for tests that loop over them (runtime-only).

#include <vector>

#include "baton/kernels.h"

namespace baton::testing {

// Every KernelIsa this build carries and this CPU runs.
inline std::vector<KernelIsa> Isas() {
  std::vector<KernelIsa> isas;
  for (KernelIsa isa : kAllKernelIsas) {
    if (KernelIsaAvailable(isa)) isas.push_back(isa);
  }
  return isas;
}

// Restores the active instruction set at the end of a scope.
struct IsaRestore {
  KernelIsa saved = ActiveKernelIsa();
  ~IsaRestore() { SelectKernelIsa(saved); }
};

}  // namespace baton::testing
