#include "baton/kernels.h"

namespace baton {
namespace {

bool SameName(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

}  // namespace

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

Status KernelRegistry::RegisterCustom(const char* name, DeviceKind kind, Kernel kernel) {
  if (name == nullptr || kernel.eval == nullptr) {
    return BATON_ERROR(kInvalidArgument, "custom kernel without name or eval");
  }
  if (num_custom_ == kMaxCustomKernels) {
    return BATON_ERROR(kResourceExhausted, "BATON_MAX_CUSTOM_KERNELS reached");
  }
  custom_[num_custom_++] = {name, kind, kernel};
  return Status::Ok();
}

const Kernel* KernelRegistry::Find(const schema::Node& node, DeviceKind kind) const {
  const auto* params = node.params_as_CustomParams();
  if (params == nullptr) return Find(node.op(), kind);
  // The newest registration of a pair wins.
  for (uint32_t i = num_custom_; i-- > 0;) {
    if (custom_[i].kind == kind && SameName(custom_[i].name, params->name()->c_str())) {
      return &custom_[i].kernel;
    }
  }
  return nullptr;
}

}  // namespace baton
