#include "baton/kernels.h"

namespace baton {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::Bool: return 1;
  }
  return 0;
}

int64_t TensorArg::elements() const {
  int64_t n = 1;
  const uint32_t r = rank();
  for (uint32_t i = 0; i < r; ++i) n *= dim(i);
  return n;
}

Status KernelRegistry::Register(Op op, DeviceKind kind, Kernel kernel) {
  const auto o = static_cast<uint32_t>(op);
  const auto k = static_cast<uint32_t>(kind);
  if (o >= kNumOps || k >= kNumDeviceKinds || kernel.eval == nullptr) {
    return BATON_ERROR(kInvalidArgument, "kernel registration out of range or without eval");
  }
  table_[k][o] = kernel;
  return Status::Ok();
}

Status KernelRegistry::RegisterAllKinds(Op op, Kernel kernel) {
  for (uint32_t k = 0; k < kNumDeviceKinds; ++k) {
    BATON_RETURN_IF_ERROR(Register(op, static_cast<DeviceKind>(k), kernel));
  }
  return Status::Ok();
}

const Kernel* KernelRegistry::Find(Op op, DeviceKind kind) const {
  const auto o = static_cast<uint32_t>(op);
  const auto k = static_cast<uint32_t>(kind);
  if (o >= kNumOps || k >= kNumDeviceKinds) return nullptr;
  const Kernel& kernel = table_[k][o];
  return kernel.eval ? &kernel : nullptr;
}

}  // namespace baton
