#include "ops/infer_context.h"

namespace baton::planner {


Result<std::vector<int64_t>> InferContext::Ints(int i, const std::string& role) const {
  const Tensor* v = Value(i);
  if (v == nullptr) {
    return Err(role + " input " + Name(i) +
               " is not a constant (dynamic shapes are not supported)");
  }
  if (v->dtype != DType::Int64 && v->dtype != DType::Int32) {
    return Err(role + " input " + Name(i) + " must be int64, got " + DTypeName(v->dtype));
  }
  if (v->shape.size() > 1) {
    return Err(role + " input " + Name(i) + " must be 1-D, got " + ShapeString(v->shape));
  }
  return v->IntData();
}

Check InferContext::RequireDType(int i, DType dtype) const {
  if (In(i).dtype != dtype) {
    return Err("input " + Name(i) + " must be " + DTypeName(dtype) + ", got " +
               DTypeName(In(i).dtype));
  }
  return Check();
}

Check InferContext::RequireMinRank(int i, size_t rank) const {
  if (Rank(i) < rank) {
    return Err("input " + Desc(i) + " has rank " + std::to_string(Rank(i)) + ", " + node_.op +
               " needs rank >= " + std::to_string(rank));
  }
  return Check();
}

Result<int64_t> InferContext::Axis(int64_t axis, size_t rank, const std::string& what) const {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return Err(what + " " + std::to_string(axis) + " is out of range for rank " +
               std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

Shape AttrOr(const Node& node, const char* key, size_t n, int64_t fallback) {
  Shape v = node.GetInts(key);
  if (node.FindAttr(key) == nullptr) v.assign(n, fallback);
  return v;
}

Check CheckSpatial(const InferContext& c, const char* key, const Shape& v, size_t n) {
  if (v.size() != n) {
    return c.Err("attribute '" + std::string(key) + "' has " + std::to_string(v.size()) +
                 " values, expected " + std::to_string(n));
  }
  for (int64_t x : v) {
    if (x <= 0) return c.Err("attribute '" + std::string(key) + "' must be positive");
  }
  return Check();
}

namespace {

bool IsQuantizedDType(DType d) { return d == DType::UInt8 || d == DType::Int8; }

// Input i is a quantized (uint8/int8) tensor.
Check RequireQuantized(const InferContext& c, int i, const char* role) {
  if (!c.Has(i)) return c.Err(std::string(role) + " is missing");
  if (!IsQuantizedDType(c.In(i).dtype)) {
    return c.Err(std::string(role) + " " + c.Name(i) + " is " + DTypeName(c.In(i).dtype) +
                 ", expected uint8 or int8");
  }
  return Check();
}

// Input i is a float32 scale of one element (or any count when !single).
Check RequireScale(const InferContext& c, int i, bool single) {
  if (!c.Has(i)) return c.Err("scale input " + std::to_string(i) + " is missing");
  BATON_TRY(c.RequireFloat(i));
  if (c.Rank(i) > 1 || (single && c.In(i).elements() != 1)) {
    return c.Err("scale " + c.Desc(i) + " must have one element");
  }
  return Check();
}

// Input i is the zero point of quantized input `q` with scale `scale`.
Check RequireZeroPoint(const InferContext& c, int i, int q, int scale) {
  if (!c.Has(i)) return c.Err("zero point input " + std::to_string(i) + " is missing");
  BATON_TRY(c.RequireDType(i, c.In(q).dtype));
  if (c.In(i).elements() != c.In(scale).elements() || c.Rank(i) > 1) {
    return c.Err("zero point " + c.Desc(i) + " must match scale " + c.Desc(scale));
  }
  return Check();
}

}  // namespace

Check CheckQLinearInputs(InferContext& c, int x, int w, int y) {
  BATON_TRY(RequireQuantized(c, x, "input"));
  BATON_TRY(RequireScale(c, x + 1, true));
  BATON_TRY(RequireZeroPoint(c, x + 2, x, x + 1));
  BATON_TRY(RequireQuantized(c, w, "weight"));
  BATON_TRY(RequireScale(c, w + 1, false));
  BATON_TRY(RequireZeroPoint(c, w + 2, w, w + 1));
  BATON_TRY(RequireScale(c, y, true));
  if (!c.Has(y + 1)) return c.Err("output zero point is missing");
  BATON_TRY(RequireQuantized(c, y + 1, "output zero point"));
  if (c.In(y + 1).elements() != 1) return c.Err("output zero point must have one element");
  return Check();
}

}  // namespace baton::planner
