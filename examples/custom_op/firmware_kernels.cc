// The application kernels of a Cortex-M firmware image that runs the
// example's plan: ports/cortex-m links this file, with my_op_kernel.cc, into
// an image listed as `... kernels:firmware_kernels.cc,my_op_kernel.cc`
// (docs/porting.md, "Custom ops"; ctest cross.cortex_m3.custom_op).

#include "baton/cortex_m/application_kernels.h"
#include "my_op_kernel.h"

namespace baton {
namespace cortex_m {

Status RegisterApplicationKernels(KernelRegistry* registry) {
  return example::RegisterMyOp(registry);
}

}  // namespace cortex_m
}  // namespace baton
