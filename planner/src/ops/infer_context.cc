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

}  // namespace baton::planner
