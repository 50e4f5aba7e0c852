// Tile: y repeats x along every axis. The repeats are not stored: each is
// y.dim(d) / x.dim(d), which prepare checks is whole. Any dtype; the
// innermost axis is copied as one row of bytes `repeats` times.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

Status TilePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(x));
  BATON_RETURN_IF_ERROR(CheckRank(y));
  BATON_KCHECK(x.dtype() == y.dtype() && DTypeSize(x.dtype()) != 0, "Tile dtype mismatch");
  BATON_KCHECK(x.rank() == y.rank(), "Tile output rank != input rank");
  for (uint32_t d = 0; d < x.rank(); ++d) {
    const int64_t in = x.dim(d), out = y.dim(d);
    BATON_KCHECK(in == 0 ? out == 0 : out % in == 0, "Tile output dims must be multiples");
  }
  return Status::Ok();
}

Status TileEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const TensorArg& ty = call.outputs[0];
  if (ty.elements() == 0) return Status::Ok();
  const size_t esize = DTypeSize(tx.dtype());
  const uint8_t* x = static_cast<const uint8_t*>(tx.data);
  uint8_t* y = static_cast<uint8_t*>(ty.data);
  const uint32_t r = tx.rank();
  if (r == 0) {
    memcpy(y, x, esize);
    return Status::Ok();
  }
  const int64_t row = tx.dim(r - 1);
  const size_t row_bytes = static_cast<size_t>(row) * esize;
  const int64_t reps = ty.dim(r - 1) / row;
  // Input strides (elements) of the outer axes.
  int64_t stride[kMaxRank];
  int64_t run = row;
  for (int32_t d = static_cast<int32_t>(r) - 2; d >= 0; --d) {
    stride[d] = run;
    run *= tx.dim(static_cast<uint32_t>(d));
  }
  const int64_t rows = DimProduct(ty, 0, r - 1);
  int64_t index[kMaxRank] = {};
  for (int64_t t = 0; t < rows; ++t) {
    int64_t src = 0;
    for (uint32_t d = 0; d + 1 < r; ++d) src += (index[d] % tx.dim(d)) * stride[d];
    const uint8_t* from = x + static_cast<size_t>(src) * esize;
    for (int64_t k = 0; k < reps; ++k) {
      memcpy(y, from, row_bytes);
      y += row_bytes;
    }
    for (int32_t d = static_cast<int32_t>(r) - 2; d >= 0; --d) {
      if (++index[d] < ty.dim(static_cast<uint32_t>(d))) break;
      index[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kTileEntries[] = {
    {Op::Tile, kAllDeviceKinds, TilePrepare, TileEval, nullptr},
};
BATON_KERNEL_FAMILY(Tile, kTileEntries);

}  // namespace kernels
}  // namespace baton
