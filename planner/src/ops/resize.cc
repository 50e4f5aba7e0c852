// Resize (opsets 11, 13; the 2-input form of opset 10) and Upsample (opsets
// 7 and 9): nearest or (bi)linear interpolation over the last two dims.
//
// The planner resolves the coordinate transformation and rounding once and
// lowers them to per-axis tables (carried in PoolParams, docs/formats.md):
// for output row oy the input rows y0[oy], y1[oy] and the weight wy[oy] of
// y1; likewise for columns. The
// kernel then does one table lookup per row and per column and no coordinate
// arithmetic.

#include <cmath>
#include <cstring>
#include <vector>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

// Upsample, and Resize in its opset-10 form (X, scales): asymmetric
// coordinates, nearest rounds down. The simplifier renames Upsample to
// Resize, which keeps it recognizable by its input count.
bool IsLegacy(const Node& node) { return node.op == "Upsample" || node.inputs.size() <= 2; }

struct ResizeSpec {
  bool linear = false;
  std::string coord;    // coordinate_transformation_mode
  std::string nearest;  // nearest_mode
  std::vector<double> scales;  // per dim, output / input
  Shape out;
};

// Reads the node's mode, scales or sizes and the output shape; errors are
// messages without the node prefix.
Result<ResizeSpec> ReadResize(const Node& node, const Shape& x, const Tensor* scales_value,
                              const Tensor* sizes_value) {
  ResizeSpec s;
  const bool legacy = IsLegacy(node);
  const std::string mode = node.GetString("mode", "nearest");
  if (mode == "linear" || mode == "bilinear") {
    s.linear = true;
  } else if (mode != "nearest") {
    return Fail("mode '" + mode + "' is not supported (nearest, linear)");
  }
  s.coord = legacy ? "asymmetric" : node.GetString("coordinate_transformation_mode", "half_pixel");
  s.nearest = legacy ? "floor" : node.GetString("nearest_mode", "round_prefer_floor");
  if (s.coord != "half_pixel" && s.coord != "pytorch_half_pixel" && s.coord != "align_corners" &&
      s.coord != "asymmetric") {
    return Fail("coordinate_transformation_mode '" + s.coord + "' is not supported");
  }
  if (s.nearest != "round_prefer_floor" && s.nearest != "round_prefer_ceil" &&
      s.nearest != "floor" && s.nearest != "ceil") {
    return Fail("nearest_mode '" + s.nearest + "' is not supported");
  }
  const size_t r = x.size();
  if (sizes_value != nullptr && sizes_value->shape != Shape{0}) {
    const std::vector<int64_t> sizes = sizes_value->IntData();
    if (sizes.size() != r) return Fail("sizes must have one entry per input dim");
    for (size_t d = 0; d < r; ++d) {
      if (sizes[d] <= 0) return Fail("sizes must be positive");
      s.out.push_back(sizes[d]);
      s.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(x[d]));
    }
  } else {
    std::vector<float> scales;
    if (node.FindAttr("scales") != nullptr) {
      scales = node.FindAttr("scales")->floats;  // opset 7
    } else if (scales_value != nullptr) {
      scales = scales_value->FloatData();
    } else {
      return Fail("needs constant scales or sizes");
    }
    if (scales.size() != r) return Fail("scales must have one float per input dim");
    for (size_t d = 0; d < r; ++d) {
      if (!(scales[d] > 0)) return Fail("scales must be positive");
      s.scales.push_back(static_cast<double>(scales[d]));
      s.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x[d]) * static_cast<double>(scales[d]))));
      if (s.out.back() <= 0) return Fail("scales give an empty output");
    }
  }
  for (size_t d = 0; d + 2 < r; ++d) {
    if (s.out[d] != x[d]) return Fail("only the last two dims may be resized");
  }
  return s;
}

Check InferResize(InferContext& c) {
  // Nearest only moves elements: it also takes uint8 and int8.
  const DType d = c.In(0).dtype;
  const bool linear = c.node().GetString("mode", "nearest") != "nearest";
  if (linear || (d != DType::UInt8 && d != DType::Int8)) BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  const bool legacy = IsLegacy(c.node());
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  if (legacy) {
    if (c.Has(1)) {
      scales = c.Value(1);
      if (scales == nullptr) return c.Err("scales input " + c.Name(1) + " is not a constant");
    }
  } else {
    if (c.Has(1) && c.Value(1) == nullptr) return c.Err("roi input must be constant");
    if (c.Has(2)) {
      scales = c.Value(2);
      if (scales == nullptr) return c.Err("scales input " + c.Name(2) + " is not a constant");
      if (scales->dtype != DType::Float32) return c.Err("scales must be float32");
      if (scales->shape == Shape{0}) scales = nullptr;  // opset 11: "" given as []
    }
    if (c.Has(3)) {
      sizes = c.Value(3);
      if (sizes == nullptr) return c.Err("sizes input " + c.Name(3) + " is not a constant");
      if (sizes->dtype != DType::Int64) return c.Err("sizes must be int64");
    }
    if (scales != nullptr && sizes != nullptr && sizes->shape != Shape{0}) {
      return c.Err("only one of scales and sizes may be given");
    }
  }
  auto spec = ReadResize(c.node(), c.S(0), scales, sizes);
  if (!spec.ok()) return c.Err(spec.error());
  c.Output(d, spec->out);
  return Check();
}

// The input coordinate of output coordinate `o` along an axis of `in` ->
// `out` elements with scale `scale`.
double SourceCoord(const std::string& coord, int64_t o, int64_t in, int64_t out, double scale) {
  const double x = static_cast<double>(o);
  if (coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (coord == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (coord == "align_corners") {
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  }
  return x / scale;  // asymmetric
}

int64_t RoundNearest(const std::string& mode, double v) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(v));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(v));
  const double f = std::floor(v);
  if (v - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_floor" ? f : f + 1);
  return static_cast<int64_t>(std::floor(v + 0.5));
}

struct AxisTable {
  std::vector<int32_t> i0, i1;
  std::vector<float> w;
};

AxisTable MakeTable(const ResizeSpec& s, int64_t in, int64_t out, double scale) {
  AxisTable t;
  for (int64_t o = 0; o < out; ++o) {
    const double src = SourceCoord(s.coord, o, in, out, scale);
    if (!s.linear) {
      int64_t i = RoundNearest(s.nearest, src);
      i = i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
      t.i0.push_back(static_cast<int32_t>(i));
      continue;
    }
    const double c = src < 0 ? 0.0 : (src > static_cast<double>(in - 1) ? in - 1 : src);
    const int64_t lo = static_cast<int64_t>(std::floor(c));
    const int64_t hi = lo + 1 < in ? lo + 1 : in - 1;
    t.i0.push_back(static_cast<int32_t>(lo));
    t.i1.push_back(static_cast<int32_t>(hi));
    t.w.push_back(static_cast<float>(c - static_cast<double>(lo)));
  }
  return t;
}

std::vector<int32_t> BitsOf(const std::vector<float>& w) {
  std::vector<int32_t> bits(w.size());
  if (!w.empty()) std::memcpy(bits.data(), w.data(), w.size() * sizeof(float));
  return bits;
}

Result<LoweredParams> LowerResize(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                  const Node& n) {
  const Shape& x = internal::InputTensor(g, n, 0).shape;
  const bool legacy = IsLegacy(n);
  const Tensor* scales = internal::ConstInput(g, n, legacy ? 1 : 2);
  const Tensor* sizes = legacy ? nullptr : internal::ConstInput(g, n, 3);
  if (scales != nullptr && scales->shape == Shape{0}) scales = nullptr;
  auto spec = ReadResize(n, x, scales, sizes);
  if (!spec.ok()) return Fail(internal::NodeWhere(n) + ": " + spec.error());
  const size_t r = x.size();
  // Rank 1: the only axis is W; H is a unit axis.
  const AxisTable ty = r >= 2 ? MakeTable(*spec, x[r - 2], spec->out[r - 2], spec->scales[r - 2])
                              : MakeTable(*spec, 1, 1, 1.0);
  const AxisTable tx = MakeTable(*spec, x[r - 1], spec->out[r - 1], spec->scales[r - 1]);
  LoweredParams out;
  // PoolParams (docs/formats.md): kernel = y0 ++ y1, pads = x0 ++ x1 (y1,
  // x1 empty for nearest), strides / dilations = wy / wx bit-cast to int32,
  // ceil_mode = linear.
  std::vector<int32_t> kernel = ty.i0, pads = tx.i0, wy, wx;
  if (spec->linear) {
    kernel.insert(kernel.end(), ty.i1.begin(), ty.i1.end());
    pads.insert(pads.end(), tx.i1.begin(), tx.i1.end());
    wy = BitsOf(ty.w);
    wx = BitsOf(tx.w);
  }
  out.type = schema::Params::PoolParams;
  out.offset = schema::CreatePoolParamsDirect(*b, &kernel, spec->linear ? &wy : nullptr, &pads,
                                              spec->linear ? &wx : nullptr, spec->linear, false)
                   .Union();
  return out;
}

// Linear: 4 multiply-adds per output element (3 with the row blend); nearest
// is a copy.
double ResizeMacs(const schema::Plan&, const schema::Node& node, double out_elements) {
  const schema::PoolParams* p = node.params_as_PoolParams();
  return p != nullptr && p->ceil_mode() ? 3 * out_elements : 0;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Resize", 1, 4, 1, 1, InferResize, true, schema::Op::Resize, 1, LowerResize, ResizeMacs, nullptr, false},
    // Renamed to Resize by the simplifier (one definition per plan op).
    {"Upsample", 1, 2, 1, 1, InferResize, false, schema::Op::Copy, 0, nullptr, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kResizeOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
