#include "eval_host.h"

#include <algorithm>
#include <cstring>

#include "baton/planner/ops/op_def.h"

namespace baton::planner::internal {

std::string ShapeString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out_shape) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[rank - 1 - k] = da == 1 ? db : da;
  }
  *out_shape = std::move(out);
  return true;
}

Result<std::vector<int64_t>> ResolvePads(const Node& node, const Shape& input_spatial,
                                         const Shape& kernel, const Shape& strides,
                                         const Shape& dilations) {
  const size_t r = input_spatial.size();
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * r, 0);
  if (auto_pad == "NOTSET") {
    if (node.FindAttr("pads") != nullptr) {
      pads = node.GetInts("pads");
      if (pads.size() != 2 * r) {
        return Fail("attribute 'pads' has " + std::to_string(pads.size()) + " values, expected " +
                    std::to_string(2 * r));
      }
      for (int64_t p : pads) {
        if (p < 0) return Fail("attribute 'pads' has a negative value");
      }
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) {
      int64_t out = (input_spatial[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - input_spatial[i]);
      int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + r] = total - pads[i];
    }
  } else if (auto_pad != "VALID") {
    return Fail("unknown auto_pad '" + auto_pad + "'");
  }
  return pads;
}

bool HasInput(const Node& node, int i) {
  return i >= 0 && static_cast<size_t>(i) < node.inputs.size() && node.inputs[i] >= 0;
}

int64_t NormalizeAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

Result<SliceSpec> ResolveSlice(const Node& node, const Shape& input_shape, const ConstInts& ints) {
  const size_t rank = input_shape.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (HasInput(node, 1) || HasInput(node, 2)) {
    if (!HasInput(node, 1) || !HasInput(node, 2)) return Fail("needs both starts and ends");
    BATON_ASSIGN_OR_RETURN(starts, ints(1));
    BATON_ASSIGN_OR_RETURN(ends, ints(2));
    if (HasInput(node, 3)) {
      BATON_ASSIGN_OR_RETURN(axes, ints(3));
    }
    if (HasInput(node, 4)) {
      BATON_ASSIGN_OR_RETURN(steps, ints(4));
    }
  } else {
    if (node.FindAttr("starts") == nullptr || node.FindAttr("ends") == nullptr) {
      return Fail("needs starts and ends (inputs, or attributes before opset 10)");
    }
    starts = node.GetInts("starts");
    ends = node.GetInts("ends");
    axes = node.GetInts("axes");
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return Fail("starts, ends, axes and steps have different lengths");
  }
  SliceSpec spec;
  spec.start.assign(rank, 0);
  spec.step.assign(rank, 1);
  spec.count = input_shape;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = NormalizeAxis(axes[i], rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
      return Fail("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                  std::to_string(rank));
    }
    if (seen[axis]) return Fail("axis " + std::to_string(axes[i]) + " is repeated");
    seen[axis] = true;
    const int64_t dim = input_shape[axis];
    const int64_t step = steps[i];
    if (step == 0) return Fail("step is 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count = 0;
    // Counts as 1 + (distance - 1) / |step|, in unsigned arithmetic: a step
    // near INT64_MAX or equal to INT64_MIN must not overflow.
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? 1 + static_cast<int64_t>(static_cast<uint64_t>(e - s - 1) /
                                               static_cast<uint64_t>(step))
                    : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      const uint64_t magnitude = 0 - static_cast<uint64_t>(step);
      count = s > e ? 1 + static_cast<int64_t>(static_cast<uint64_t>(s - e - 1) / magnitude) : 0;
    }
    spec.start[axis] = s;
    spec.step[axis] = step;
    spec.count[axis] = count;
  }
  return spec;
}

bool CanEvaluate(const std::string& op) {
  const OpDef* def = FindOp(op);
  return def != nullptr && def->eval != nullptr;
}

Check EvaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs) {
  const OpDef* def = FindOp(node.op);
  if (def == nullptr || def->eval == nullptr) {
    return Fail("op '" + node.op + "' cannot be evaluated in the planner");
  }
  if (inputs.empty() || inputs[0] == nullptr || outputs.empty()) {
    return Fail("missing input or output");
  }
  const Tensor& x = *inputs[0];
  if (!def->eval_reads_shapes_only && x.data.size() != x.bytes()) {
    return Fail("value of '" + x.name + "' has " + std::to_string(x.data.size()) +
                " bytes, expected " + std::to_string(x.bytes()));
  }
  return def->eval(node, inputs, outputs);
}

Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Shape BroadcastStrides(const Shape& in, const Shape& out) {
  Shape strides(out.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t i = in.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    strides[o] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  return strides;
}

void CopyElems(const uint8_t* src, int64_t src_index, uint8_t* dst, int64_t dst_index,
               int64_t elements, size_t esize) {
  // An empty tensor's data() may be null, and memcpy forbids null even for
  // zero bytes (UBSan: FoldModels.WhereOnShapes concatenates an empty shape).
  if (elements <= 0) return;
  std::memcpy(dst + static_cast<size_t>(dst_index) * esize,
              src + static_cast<size_t>(src_index) * esize, static_cast<size_t>(elements) * esize);
}

void CopyStrided(const Tensor& x, const Shape& strides, int64_t base, Tensor* y) {
  const size_t esize = DTypeBytes(x.dtype);
  y->data.resize(y->bytes());
  ForEachIndex(y->shape, strides, strides, [&](int64_t i, int64_t a, int64_t) {
    CopyElems(x.data.data(), base + a, y->data.data(), i, 1, esize);
  });
}

Check RequireValue(const std::vector<const Tensor*>& inputs, size_t i) {
  if (i >= inputs.size() || inputs[i] == nullptr) {
    return Fail("input " + std::to_string(i) + " has no value");
  }
  const Tensor& t = *inputs[i];
  if (t.data.size() != t.bytes()) return Fail("value of '" + t.name + "' is incomplete");
  return Check();
}

Error CannotEvaluate(const Node& node, DType dtype) {
  return Fail(std::string("cannot evaluate ") + node.op + " on " + DTypeName(dtype));
}

}  // namespace baton::planner::internal
