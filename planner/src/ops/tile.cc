// Tile with constant repeats. The plan stores no repeats: the kernel reads
// them from the shapes (output dim / input dim).

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferTile(InferContext& c) {
  BATON_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, c.Ints(1, "repeats"));
  if (repeats.size() != c.Rank(0)) {
    return c.Err("repeats " + ShapeString(repeats) + " must have one value per dim of " +
                 c.Desc(0));
  }
  Shape out = c.S(0);
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0) return c.Err("repeats " + ShapeString(repeats) + " has a negative value");
    out[d] *= repeats[d];
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

// Any dtype: element y[i] is x at (i_d mod x_d) along every dim d.
Check EvalTile(const Node&, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const size_t esize = DTypeBytes(x.dtype);
  y->data.assign(static_cast<size_t>(y->elements()) * esize, 0);
  if (y->elements() == 0) return Check();
  const Shape xs = internal::Strides(x.shape);
  const size_t r = x.shape.size();
  std::vector<int64_t> index(r, 0);
  for (int64_t i = 0; i < y->elements(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += (index[d] % x.shape[d]) * xs[d];
    internal::CopyElems(x.data.data(), src, y->data.data(), i, 1, esize);
    for (size_t d = r; d-- > 0;) {
      if (++index[d] < y->shape[d]) break;
      index[d] = 0;
    }
  }
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Tile", 2, 2, 1, 1, InferTile, true, schema::Op::Tile, 1, nullptr, nullptr, EvalTile, false},
};
// clang-format on

}  // namespace

const OpFamily kTileOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
