#include "eval_host.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace baton::planner::internal {
namespace {

// Row-major strides, in elements.
Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// Strides of `in` broadcast against `out` (right-aligned; 0 on broadcast dims).
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

// Calls fn(out_index, a_offset, b_offset) for every element of `shape` in
// row-major order, where the offsets advance by the given per-dim strides.
template <typename Fn>
void ForEachIndex(const Shape& shape, const Shape& a_strides, const Shape& b_strides, Fn fn) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  std::vector<int64_t> counter(shape.size(), 0);
  int64_t a = 0, b = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, a, b);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++counter[d] < shape[d]) {
        a += a_strides[d];
        b += b_strides[d];
        break;
      }
      a -= a_strides[d] * (shape[d] - 1);
      b -= b_strides[d] * (shape[d] - 1);
      counter[d] = 0;
    }
  }
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(t.data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data.data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
void Store(const std::vector<T>& values, Tensor* t) {
  t->data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t->data.data(), values.data(), t->data.size());
}

template <typename T>
Check Binary(const std::string& op, const Tensor& a, const Tensor& b, Tensor* out) {
  const std::vector<T> va = Values<T>(a), vb = Values<T>(b);
  std::vector<T> result(static_cast<size_t>(out->elements()));
  const Shape sa = BroadcastStrides(a.shape, out->shape);
  const Shape sb = BroadcastStrides(b.shape, out->shape);
  bool div_by_zero = false;
  ForEachIndex(out->shape, sa, sb, [&](int64_t i, int64_t ia, int64_t ib) {
    T x = va[ia], y = vb[ib];
    T r = 0;
    if (op == "Add") {
      r = x + y;
    } else if (op == "Sub") {
      r = x - y;
    } else if (op == "Mul") {
      r = x * y;
    } else if constexpr (std::is_integral_v<T>) {
      if (y == 0) {
        div_by_zero = true;
      } else {
        r = x / y;
      }
    } else {
      r = x / y;
    }
    result[i] = r;
  });
  if (div_by_zero) return Fail("integer division by zero in '" + b.name + "'");
  Store(result, out);
  return Check();
}

float Unary(const Node& node, float x, float lo, float hi) {
  const std::string& op = node.op;
  if (op == "Relu") return std::max(x, 0.0f);
  if (op == "Sigmoid") return 1.0f / (1.0f + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "LeakyRelu") return x >= 0 ? x : x * node.GetFloat("alpha", 0.01f);
  if (op == "HardSigmoid") {
    return std::clamp(node.GetFloat("alpha", 0.2f) * x + node.GetFloat("beta", 0.5f), 0.0f, 1.0f);
  }
  if (op == "HardSwish") return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
  return std::clamp(x, lo, hi);  // Clip
}

// Copies `elements` elements of `esize` bytes each.
void CopyElems(const uint8_t* src, int64_t src_index, uint8_t* dst, int64_t dst_index,
               int64_t elements, size_t esize) {
  std::memcpy(dst + static_cast<size_t>(dst_index) * esize,
              src + static_cast<size_t>(src_index) * esize, static_cast<size_t>(elements) * esize);
}

int64_t NormalizeAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

}  // namespace

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
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e - step - 1) / -step : 0;
    }
    spec.start[axis] = s;
    spec.step[axis] = step;
    spec.count[axis] = count;
  }
  return spec;
}

bool CanEvaluate(const std::string& op) {
  static const char* const kOps[] = {
      "Shape",     "Identity", "Dropout",   "Reshape", "Flatten",     "Squeeze",
      "Unsqueeze", "__copy",   "Gather",    "Concat",  "Split",       "Slice",
      "Transpose", "Add",      "Sub",       "Mul",     "Div",         "Relu",
      "Sigmoid",   "Tanh",     "LeakyRelu", "Clip",    "HardSigmoid", "HardSwish",
  };
  for (const char* known : kOps) {
    if (op == known) return true;
  }
  return false;
}

Check EvaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs) {
  const std::string& op = node.op;
  if (!CanEvaluate(op)) return Fail("op '" + op + "' cannot be evaluated in the planner");
  if (inputs.empty() || inputs[0] == nullptr || outputs.empty()) {
    return Fail("missing input or output");
  }
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const size_t esize = DTypeBytes(x.dtype);

  if (op == "Shape") {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t start = node.GetInt("start", 0), end = node.GetInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    Store(std::vector<int64_t>(x.shape.begin() + start, x.shape.begin() + end), y);
    return Check();
  }
  if (x.data.size() != x.bytes()) {
    return Fail("value of '" + x.name + "' has " + std::to_string(x.data.size()) +
                " bytes, expected " + std::to_string(x.bytes()));
  }
  if (op == "Identity" || op == "Dropout" || op == "Reshape" || op == "Flatten" ||
      op == "Squeeze" || op == "Unsqueeze" || op == "__copy") {
    y->data = x.data;
    // Dropout's optional mask output is all ones in inference.
    if (outputs.size() > 1 && outputs[1] != nullptr) {
      outputs[1]->data.assign(outputs[1]->bytes(), 1);
    }
    return Check();
  }
  if (op == "Gather") {
    if (inputs.size() < 2 || inputs[1] == nullptr) return Fail("missing indices");
    const int64_t axis = NormalizeAxis(node.GetInt("axis", 0), x.shape.size());
    const std::vector<int64_t> indices = inputs[1]->IntData();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    const int64_t dim = x.shape[axis];
    y->data.resize(y->bytes());
    int64_t o = 0;
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t index : indices) {
        int64_t k = index < 0 ? index + dim : index;
        if (k < 0 || k >= dim) {
          return Fail("index " + std::to_string(index) + " is out of range for dim " +
                      std::to_string(dim));
        }
        CopyElems(x.data.data(), (a * dim + k) * inner, y->data.data(), o, inner, esize);
        o += inner;
      }
    }
    return Check();
  }
  if (op == "Concat" || op == "Split") {
    // Both walk the concatenated tensor in (outer, part) order.
    const bool concat = op == "Concat";
    const Shape& whole = concat ? y->shape : x.shape;
    const int64_t axis = NormalizeAxis(node.GetInt("axis", 0), whole.size());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= whole[d];
    for (size_t d = static_cast<size_t>(axis) + 1; d < whole.size(); ++d) inner *= whole[d];
    std::vector<const Tensor*> parts_in;
    if (concat) {
      for (const Tensor* t : inputs) {
        if (t == nullptr) return Fail("missing Concat input");
        if (t->data.size() != t->bytes()) return Fail("value of '" + t->name + "' is incomplete");
      }
      y->data.resize(y->bytes());
    } else {
      for (Tensor* t : outputs) {
        if (t != nullptr) t->data.resize(t->bytes());
      }
    }
    const size_t n_parts = concat ? inputs.size() : outputs.size();
    int64_t pos = 0;
    for (int64_t a = 0; a < outer; ++a) {
      for (size_t p = 0; p < n_parts; ++p) {
        const Shape& part_shape = concat ? inputs[p]->shape : outputs[p]->shape;
        const int64_t n = part_shape[axis] * inner;
        if (concat) {
          CopyElems(inputs[p]->data.data(), a * n, y->data.data(), pos, n, esize);
        } else if (outputs[p] != nullptr) {
          CopyElems(x.data.data(), pos, outputs[p]->data.data(), a * n, n, esize);
        }
        pos += n;
      }
    }
    return Check();
  }
  if (op == "Slice" || op == "Transpose") {
    const Shape in_strides = Strides(x.shape);
    Shape strides(x.shape.size());
    int64_t base = 0;
    if (op == "Slice") {
      auto spec = ResolveSlice(node, x.shape, [&](int i) -> Result<std::vector<int64_t>> {
        if (static_cast<size_t>(i) >= inputs.size() || inputs[i] == nullptr) {
          return Fail("missing input " + std::to_string(i));
        }
        return inputs[i]->IntData();
      });
      if (!spec.ok()) return Fail(spec.error());
      for (size_t d = 0; d < x.shape.size(); ++d) {
        strides[d] = spec->step[d] * in_strides[d];
        base += spec->start[d] * in_strides[d];
      }
    } else {
      std::vector<int64_t> perm = node.GetInts("perm");
      if (perm.empty()) {
        for (size_t d = x.shape.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      }
      for (size_t d = 0; d < perm.size(); ++d) strides[d] = in_strides[perm[d]];
    }
    y->data.resize(y->bytes());
    ForEachIndex(y->shape, strides, strides, [&](int64_t i, int64_t a, int64_t) {
      CopyElems(x.data.data(), base + a, y->data.data(), i, 1, esize);
    });
    return Check();
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (inputs.size() < 2 || inputs[1] == nullptr) return Fail("missing second operand");
    const Tensor& b = *inputs[1];
    if (b.dtype != x.dtype) return Fail("operands have different dtypes");
    if (b.data.size() != b.bytes()) return Fail("value of '" + b.name + "' is incomplete");
    switch (x.dtype) {
      case DType::Float32:
        return Binary<float>(op, x, b, y);
      case DType::Int32:
        return Binary<int32_t>(op, x, b, y);
      case DType::Int64:
        return Binary<int64_t>(op, x, b, y);
      case DType::UInt8:
      case DType::Int8:
        break;
    }
    return Fail(std::string("cannot evaluate ") + op + " on " + DTypeName(x.dtype));
  }
  // Float activations.
  if (x.dtype != DType::Float32) {
    return Fail(std::string("cannot evaluate ") + op + " on " + DTypeName(x.dtype));
  }
  float lo = node.GetFloat("min", -std::numeric_limits<float>::infinity());
  float hi = node.GetFloat("max", std::numeric_limits<float>::infinity());
  for (size_t i = 1; i < 3 && i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) continue;
    std::vector<float> v = inputs[i]->FloatData();
    if (v.size() != 1) return Fail("Clip bound '" + inputs[i]->name + "' is not a float scalar");
    (i == 1 ? lo : hi) = v[0];
  }
  std::vector<float> values = x.FloatData();
  for (float& v : values) v = Unary(node, v, lo, hi);
  Store(values, y);
  return Check();
}

}  // namespace baton::planner::internal
