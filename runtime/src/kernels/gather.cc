// Gather along AxisParams.axis (non-negative; 0 when params are absent).
// Data of any dtype is copied in chunks of the dims after the axis; indices
// are int64 or int32, negative ones counting from the end. An index out of
// range (it is data, not known at load) fails the node with OutOfRange.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

uint32_t AxisOf(const KernelCall& call) {
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  return p ? static_cast<uint32_t>(p->axis()) : 0;
}

Status GatherPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 2, 1));
  const TensorArg& data = call.inputs[0];
  const TensorArg& idx = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(data));
  BATON_KCHECK(data.dtype() == y.dtype() && DTypeSize(data.dtype()) != 0, "Gather dtype mismatch");
  BATON_KCHECK(idx.dtype() == DType::Int64 || idx.dtype() == DType::Int32,
               "Gather indices must be int64 or int32");
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(!p || (p->axis() >= 0 && static_cast<uint32_t>(p->axis()) < data.rank()),
               "Gather axis out of range");
  BATON_KCHECK(data.rank() >= 1, "Gather data must have rank >= 1");
  const uint32_t axis = AxisOf(call);
  BATON_KCHECK(y.rank() == data.rank() - 1 + idx.rank(), "Gather output rank mismatch");
  uint32_t j = 0;
  for (uint32_t d = 0; d < axis; ++d, ++j) {
    BATON_KCHECK(y.dim(j) == data.dim(d), "Gather output shape mismatch");
  }
  for (uint32_t d = 0; d < idx.rank(); ++d, ++j) {
    BATON_KCHECK(y.dim(j) == idx.dim(d), "Gather output shape mismatch");
  }
  for (uint32_t d = axis + 1; d < data.rank(); ++d, ++j) {
    BATON_KCHECK(y.dim(j) == data.dim(d), "Gather output shape mismatch");
  }
  return Status::Ok();
}

Status GatherEval(const KernelCall& call) {
  const TensorArg& data = call.inputs[0];
  const TensorArg& idx = call.inputs[1];
  const uint32_t axis = AxisOf(call);
  const int64_t outer = DimProduct(data, 0, axis);
  const int64_t dim = data.dim(axis);
  const size_t chunk =
      static_cast<size_t>(DimProduct(data, axis + 1, data.rank())) * DTypeSize(data.dtype());
  const int64_t count = idx.elements();
  const bool wide = idx.dtype() == DType::Int64;
  const int64_t* i64 = static_cast<const int64_t*>(idx.data);
  const int32_t* i32 = static_cast<const int32_t*>(idx.data);
  const uint8_t* src = static_cast<const uint8_t*>(data.data);
  uint8_t* dst = static_cast<uint8_t*>(call.outputs[0].data);
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* block = src + static_cast<size_t>(o * dim) * chunk;
    for (int64_t t = 0; t < count; ++t) {
      int64_t i = wide ? i64[t] : i32[t];
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) return BATON_ERROR(kOutOfRange, "Gather index out of range");
      memcpy(dst, block + static_cast<size_t>(i) * chunk, chunk);
      dst += chunk;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kGatherEntries[] = {
    {Op::Gather, kAllDeviceKinds, GatherPrepare, GatherEval, nullptr},
};
BATON_KERNEL_FAMILY(Gather, kGatherEntries);

}  // namespace kernels
}  // namespace baton
