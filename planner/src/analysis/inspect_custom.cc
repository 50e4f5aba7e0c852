// The op names and attributes of Custom and Subgraph nodes as `baton
// inspect` prints them (inspect.h, inspect_internal.h).

#include <cstring>
#include <string>

#include "analysis/inspect_internal.h"
#include "baton/custom_op.h"
#include "baton/planner/analysis/inspect.h"

namespace baton::planner {
namespace {

using ojson = nlohmann::ordered_json;

template <typename T>
ojson TensorValues(const uint8_t* data, size_t count) {
  ojson values = ojson::array();
  for (size_t k = 0; k < count; ++k) {
    T v;
    std::memcpy(&v, data + k * sizeof(T), sizeof(T));
    values.push_back(v);
  }
  return values;
}

// Tensor values are printed up to this many elements; larger tensors show
// dtype, shape and bytes only.
constexpr size_t kMaxPrintedElements = 64;

ojson TensorJson(const schema::Attribute& a) {
  ojson o;
  o["dtype"] = PlanDTypeName(a.dtype());
  o["shape"] = ojson::array();
  size_t elements = 1;
  if (a.shape() != nullptr) {
    for (int64_t d : *a.shape()) {
      o["shape"].push_back(d);
      elements *= static_cast<size_t>(d);
    }
  }
  const size_t bytes = a.data() ? a.data()->size() : 0;
  o["bytes"] = bytes;
  if (elements > kMaxPrintedElements || bytes == 0) return o;
  const uint8_t* p = a.data()->data();
  switch (a.dtype()) {
    case schema::DType::Float32:
      o["values"] = TensorValues<float>(p, elements);
      break;
    case schema::DType::Int32:
      o["values"] = TensorValues<int32_t>(p, elements);
      break;
    case schema::DType::Int64:
      o["values"] = TensorValues<int64_t>(p, elements);
      break;
    case schema::DType::UInt8:
    case schema::DType::Bool:
      o["values"] = TensorValues<uint8_t>(p, elements);
      break;
    case schema::DType::Int8:
      o["values"] = TensorValues<int8_t>(p, elements);
      break;
  }
  return o;
}

ojson AttributeJson(const schema::Attribute& a) {
  using Kind = schema::AttributeKind;
  auto strings = [&a] {
    ojson list = ojson::array();
    if (a.strings() != nullptr) {
      for (const flatbuffers::String* s : *a.strings()) list.push_back(s->str());
    }
    return list;
  };
  switch (a.kind()) {
    case Kind::Int:
      return a.ints()->Get(0);
    case Kind::Float:
      return a.floats()->Get(0);
    case Kind::String:
      return a.strings()->Get(0)->str();
    case Kind::Ints: {
      ojson list = ojson::array();
      if (a.ints() != nullptr)
        for (int64_t v : *a.ints()) list.push_back(v);
      return list;
    }
    case Kind::Floats: {
      ojson list = ojson::array();
      if (a.floats() != nullptr)
        for (float v : *a.floats()) list.push_back(v);
      return list;
    }
    case Kind::Strings:
      return strings();
    case Kind::Tensor:
      return TensorJson(a);
  }
  return nullptr;
}

}  // namespace

std::string PlanNodeOpName(const schema::Node& node) {
  const schema::CustomParams* custom = node.params_as_CustomParams();
  if (node.op() == schema::Op::Custom && custom != nullptr) {
    return custom->name()->str();
  }
  return PlanOpName(node.op());
}

namespace inspect_detail {

nlohmann::ordered_json CustomAttributesJson(const schema::Node& node) {
  CustomAttributes attrs;
  const Status status = CustomAttributes::Load(node, &attrs);
  ojson o = ojson::object();
  if (!status.ok()) {
    o["error"] = status.message();
    return o;
  }
  for (uint32_t i = 0; i < attrs.size(); ++i) {
    const schema::Attribute* a = attrs.Get(i);
    o[a->name()->str()] = AttributeJson(*a);
  }
  return o;
}

}  // namespace inspect_detail
}  // namespace baton::planner
