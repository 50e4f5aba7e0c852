// CustomParams of Custom (and Subgraph) nodes: the op's name and its
// attributes as a nested CustomAttributes FlatBuffer (schema/plan.fbs).

#include "baton/planner/ops/custom_params.h"

#include <map>
#include <string>
#include <vector>

namespace baton::planner {
namespace {

using AttrOffset = flatbuffers::Offset<schema::Attribute>;

AttrOffset BuildAttribute(flatbuffers::FlatBufferBuilder* b, const std::string& name,
                          const Attr& a) {
  using Kind = schema::AttributeKind;
  // FlatBuffers builds back to front: children before their table.
  switch (a.kind) {
    case Attr::Kind::kInt: {
      const auto ints = b->CreateVector(std::vector<int64_t>{a.i});
      return schema::CreateAttribute(*b, b->CreateString(name), Kind::Int, ints);
    }
    case Attr::Kind::kFloat: {
      const auto floats = b->CreateVector(std::vector<float>{a.f});
      return schema::CreateAttribute(*b, b->CreateString(name), Kind::Float, 0, floats);
    }
    case Attr::Kind::kInts: {
      const auto ints = b->CreateVector(a.ints);
      return schema::CreateAttribute(*b, b->CreateString(name), Kind::Ints, ints);
    }
    case Attr::Kind::kFloats: {
      const auto floats = b->CreateVector(a.floats);
      return schema::CreateAttribute(*b, b->CreateString(name), Kind::Floats, 0, floats);
    }
    case Attr::Kind::kString:
    case Attr::Kind::kStrings: {
      const std::vector<std::string> values =
          a.kind == Attr::Kind::kString ? std::vector<std::string>{a.s} : a.strings;
      const auto strings = b->CreateVectorOfStrings(values);
      return schema::CreateAttribute(*b, b->CreateString(name),
                                     a.kind == Attr::Kind::kString ? Kind::String : Kind::Strings,
                                     0, 0, strings);
    }
    case Attr::Kind::kTensor: {
      b->ForceVectorAlignment(a.t.data.size(), 1, 8);
      const auto data = b->CreateVector(a.t.data);
      const auto shape = b->CreateVector(a.t.shape);
      return schema::CreateAttribute(*b, b->CreateString(name), Kind::Tensor, 0, 0, 0, a.t.dtype,
                                     shape, data);
    }
  }
  return AttrOffset();
}

}  // namespace

Result<LoweredParams> LowerCustomParams(flatbuffers::FlatBufferBuilder* builder,
                                        const std::string& name,
                                        const std::map<std::string, Attr>& attrs) {
  if (name.empty()) return Fail("a custom op needs a name");
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> nested;
  if (!attrs.empty()) {
    // The nested buffer is built alone, so its bytes depend only on the
    // attributes; std::map keeps them sorted by name, as the runtime's
    // lookup requires.
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<AttrOffset> list;
    for (const auto& [key, attr] : attrs) {
      if (attr.kind == Attr::Kind::kTensor &&
          attr.t.data.size() != static_cast<size_t>(attr.t.elements()) * DTypeBytes(attr.t.dtype)) {
        return Fail("custom op '" + name + "': tensor attribute '" + key + "' has " +
                    std::to_string(attr.t.data.size()) + " bytes, its shape needs " +
                    std::to_string(attr.t.bytes()));
      }
      list.push_back(BuildAttribute(&fbb, key, attr));
    }
    fbb.Finish(schema::CreateCustomAttributes(fbb, fbb.CreateVector(list)));
    builder->ForceVectorAlignment(fbb.GetSize(), 1, 8);
    nested = builder->CreateVector(fbb.GetBufferPointer(), fbb.GetSize());
  }
  const auto name_offset = builder->CreateString(name);
  LoweredParams params;
  params.type = schema::Params::CustomParams;
  params.offset = schema::CreateCustomParams(*builder, name_offset, nested).Union();
  return params;
}

}  // namespace baton::planner
