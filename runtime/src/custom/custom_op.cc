#include "baton/custom_op.h"

#include "flatbuffers/flatbuffers.h"

namespace baton {
namespace {

using schema::AttributeKind;

// strcmp, without GCC's -Wstringop-overread false positive at -O1 with
// sanitizers.
bool SameName(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

bool Aligned8(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 7u) == 0; }

template <typename V>
uint32_t Count(const V* v) {
  return v ? v->size() : 0;
}

// The checks Load makes of one verified attribute beyond the verifier's:
// the vectors its kind needs are there with the right counts, 8-byte
// vectors are aligned (kernels read them in place), tensor data matches
// dtype and shape.
const char* CheckAttribute(const schema::Attribute& a) {
  if (!Aligned8(a.ints() ? a.ints()->data() : nullptr) ||
      !Aligned8(a.shape() ? a.shape()->data() : nullptr) ||
      !Aligned8(a.data() ? a.data()->data() : nullptr)) {
    return "attribute vector misaligned";
  }
  switch (a.kind()) {
    case AttributeKind::Int:
      return Count(a.ints()) == 1 ? nullptr : "Int attribute without exactly one value";
    case AttributeKind::Float:
      return Count(a.floats()) == 1 ? nullptr : "Float attribute without exactly one value";
    case AttributeKind::String:
      return Count(a.strings()) == 1 ? nullptr : "String attribute without exactly one value";
    case AttributeKind::Ints:
    case AttributeKind::Floats:
    case AttributeKind::Strings:
      return nullptr;
    case AttributeKind::Tensor: {
      if (Count(a.shape()) > kMaxRank) return "tensor attribute rank exceeds BATON_MAX_RANK";
      const size_t esize = DTypeSize(a.dtype());
      if (esize == 0) return "tensor attribute of unknown dtype";
      uint64_t elements = 1;
      for (uint32_t d = 0; d < Count(a.shape()); ++d) {
        const int64_t dim = a.shape()->Get(d);
        if (dim < 0 || (dim > 0 && elements > (uint64_t{1} << 40) / static_cast<uint64_t>(dim))) {
          return "tensor attribute shape out of range";
        }
        elements *= static_cast<uint64_t>(dim);
      }
      return elements * esize == Count(a.data()) ? nullptr
                                                  : "tensor attribute data does not match its shape";
    }
  }
  return "attribute of unknown kind";
}

}  // namespace

Status CustomAttributes::Load(const schema::Node& node, CustomAttributes* out) {
  const schema::CustomParams* params = node.params_as_CustomParams();
  if (params == nullptr) return BATON_ERROR(kInvalidArgument, "node carries no CustomParams");
  *out = CustomAttributes();
  out->op_name_ = params->name()->c_str();
  const auto* bytes = params->attributes();
  if (bytes == nullptr || bytes->size() == 0) return Status::Ok();
  if (!Aligned8(bytes->data())) return BATON_ERROR(kInvalidArgument, "custom attributes misaligned");
  flatbuffers::Verifier verifier(bytes->data(), bytes->size());
  if (!verifier.VerifyBuffer<schema::CustomAttributes>(nullptr)) {
    return BATON_ERROR(kInvalidArgument, "custom attributes fail verification");
  }
  const auto* root = flatbuffers::GetRoot<schema::CustomAttributes>(bytes->data());
  for (uint32_t i = 0; i < Count(root->attributes()); ++i) {
    const char* problem = CheckAttribute(*root->attributes()->Get(i));
    if (problem != nullptr) return Status(StatusCode::kInvalidArgument, problem);
  }
  out->root_ = root;
  return Status::Ok();
}

uint32_t CustomAttributes::size() const { return root_ ? Count(root_->attributes()) : 0; }

const schema::Attribute* CustomAttributes::Get(uint32_t i) const {
  return i < size() ? root_->attributes()->Get(i) : nullptr;
}

const schema::Attribute* CustomAttributes::Find(const char* name) const {
  for (uint32_t i = 0; i < size(); ++i) {
    const schema::Attribute* a = root_->attributes()->Get(i);
    if (SameName(a->name()->c_str(), name)) return a;
  }
  return nullptr;
}

bool CustomAttributes::Int(const char* name, int64_t* out) const {
  const schema::Attribute* a = Find(name);
  if (a == nullptr || a->kind() != AttributeKind::Int) return false;
  *out = a->ints()->Get(0);
  return true;
}

bool CustomAttributes::Float(const char* name, float* out) const {
  const schema::Attribute* a = Find(name);
  if (a == nullptr || a->kind() != AttributeKind::Float) return false;
  *out = a->floats()->Get(0);
  return true;
}

const char* CustomAttributes::String(const char* name) const {
  const schema::Attribute* a = Find(name);
  return a != nullptr && a->kind() == AttributeKind::String ? a->strings()->Get(0)->c_str()
                                                            : nullptr;
}

int32_t CustomAttributes::Ints(const char* name, int64_t* out, uint32_t capacity) const {
  const schema::Attribute* a = Find(name);
  if (a == nullptr || a->kind() != AttributeKind::Ints) return -1;
  const uint32_t n = Count(a->ints());
  for (uint32_t i = 0; i < n && i < capacity; ++i) out[i] = a->ints()->Get(i);
  return static_cast<int32_t>(n);
}

int32_t CustomAttributes::Floats(const char* name, float* out, uint32_t capacity) const {
  const schema::Attribute* a = Find(name);
  if (a == nullptr || a->kind() != AttributeKind::Floats) return -1;
  const uint32_t n = Count(a->floats());
  for (uint32_t i = 0; i < n && i < capacity; ++i) out[i] = a->floats()->Get(i);
  return static_cast<int32_t>(n);
}

bool CustomAttributes::Tensor(const char* name, TensorValue* out) const {
  const schema::Attribute* a = Find(name);
  if (a == nullptr || a->kind() != AttributeKind::Tensor) return false;
  *out = TensorValue();
  out->dtype = a->dtype();
  out->rank = Count(a->shape());
  for (uint32_t d = 0; d < out->rank; ++d) out->dims[d] = a->shape()->Get(d);
  out->data = a->data() ? a->data()->data() : nullptr;
  out->bytes = Count(a->data());
  return true;
}

}  // namespace baton
