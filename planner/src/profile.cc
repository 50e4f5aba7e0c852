#include "baton/planner/profile.h"

#include <cmath>
#include <sstream>

#include "baton/planner/graph.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/target.h"
#include "import/json_fields.h"

namespace baton::planner {
namespace {

using internal::json;

void AppendOperands(const std::vector<OperandSignature>& list, std::ostringstream* o) {
  *o << "(";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) *o << ",";
    if (!list[i].present) {
      *o << "-";
      continue;
    }
    *o << list[i].dtype << "[";
    for (size_t k = 0; k < list[i].shape.size(); ++k) *o << (k ? "," : "") << list[i].shape[k];
    *o << "]";
  }
  *o << ")";
}

std::optional<schema::DeviceKind> KindFromName(const std::string& name) {
  for (schema::DeviceKind k : {schema::DeviceKind::Cpu, schema::DeviceKind::Npu,
                               schema::DeviceKind::Gpu, schema::DeviceKind::Dsp}) {
    if (name == DeviceKindName(k)) return k;
  }
  return std::nullopt;
}

Result<std::vector<OperandSignature>> ParseOperands(const json& entry, const char* key,
                                                    const std::string& where) {
  const json* list = internal::Field(entry, key);
  if (list == nullptr || !list->is_array()) return Fail(where + ": '" + key + "' must be a list");
  std::vector<OperandSignature> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    const std::string at = where + ": " + key + "[" + std::to_string(i) + "]";
    OperandSignature s;
    if (v.is_null()) {
      s.present = false;
      out.push_back(s);
      continue;
    }
    const std::string* dtype = internal::StringField(v, "dtype");
    if (dtype == nullptr || !ParseDType(*dtype)) {
      return Fail(at + ": 'dtype' must be a dtype name (float32, int32, int64, uint8, int8)");
    }
    s.dtype = *dtype;
    const json* shape = internal::Field(v, "shape");
    if (shape == nullptr || !shape->is_array()) return Fail(at + ": 'shape' must be a list");
    for (const json& d : *shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        return Fail(at + ": 'shape' must hold non-negative integers");
      }
      s.shape.push_back(d.get<int64_t>());
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<double> Seconds(const json& entry, const char* key, const std::string& where) {
  const json* v = internal::Field(entry, key);
  if (v == nullptr || !v->is_number() || !std::isfinite(v->get<double>()) ||
      v->get<double>() < 0) {
    return Fail(where + ": '" + key + "' must be a non-negative number of seconds");
  }
  return v->get<double>();
}

Result<ProfileEntry> ParseEntry(const json& e, const std::string& where) {
  if (!e.is_object()) return Fail(where + ": must be an object");
  ProfileEntry out;
  const std::string* node = internal::StringField(e, "node");
  if (node != nullptr) out.node = *node;
  const std::string* op = internal::StringField(e, "op");
  if (op == nullptr) return Fail(where + ": 'op' must be a string");
  bool known = false;
  for (int o = 1; o <= static_cast<int>(schema::Op::MAX); ++o) {
    known = known || *op == schema::EnumNameOp(static_cast<schema::Op>(o));
  }
  if (!known) return Fail(where + ": unknown op '" + *op + "'");
  out.op = *op;
  const std::string* device = internal::StringField(e, "device");
  if (device == nullptr) return Fail(where + ": 'device' must be a string");
  out.device = *device;
  const std::string* kind = internal::StringField(e, "kind");
  std::optional<schema::DeviceKind> k = kind ? KindFromName(*kind) : std::nullopt;
  if (!k) return Fail(where + ": 'kind' must be cpu, npu, gpu or dsp");
  out.kind = *k;
  BATON_ASSIGN_OR_RETURN(out.inputs, ParseOperands(e, "inputs", where));
  BATON_ASSIGN_OR_RETURN(out.outputs, ParseOperands(e, "outputs", where));
  BATON_ASSIGN_OR_RETURN(out.median_s, Seconds(e, "median_s", where));
  BATON_ASSIGN_OR_RETURN(out.min_s, Seconds(e, "min_s", where));
  const json* runs = internal::Field(e, "runs");
  if (runs == nullptr || !runs->is_number_integer() || runs->get<int64_t>() < 1) {
    return Fail(where + ": 'runs' must be a positive integer");
  }
  out.runs = static_cast<int>(runs->get<int64_t>());
  out.signature = NodeSignatureText(out.op, out.inputs, out.outputs);
  return out;
}

double Mean(const std::vector<ProfileEntry>& entries, const std::vector<size_t>& which) {
  double sum = 0;
  for (size_t i : which) sum += entries[i].median_s;
  return sum / static_cast<double>(which.size());
}

json OperandsJson(const std::vector<OperandSignature>& list) {
  json out = json::array();
  for (const OperandSignature& s : list) {
    if (!s.present) {
      out.push_back(nullptr);
      continue;
    }
    out.push_back({{"dtype", s.dtype}, {"shape", s.shape}});
  }
  return out;
}

}  // namespace

std::string NodeSignatureText(const std::string& op, const std::vector<OperandSignature>& inputs,
                              const std::vector<OperandSignature>& outputs) {
  std::ostringstream o;
  o << op;
  AppendOperands(inputs, &o);
  o << "->";
  AppendOperands(outputs, &o);
  return o.str();
}

void Profile::BuildIndex() {
  by_kind_.clear();
  by_device_.clear();
  for (size_t i = 0; i < entries.size(); ++i) {
    const ProfileEntry& e = entries[i];
    by_kind_[{e.signature, static_cast<int>(e.kind)}].push_back(i);
    by_device_[{e.signature, e.device}].push_back(i);
  }
}

void Profile::Merge(const Profile& other) {
  source += (source.empty() ? "" : ", ") + other.source;
  if (plan.empty()) plan = other.plan;
  runs = std::max(runs, other.runs);
  // Every file's kernel ISAs, once each: "avx2, portable" (a merged
  // profile's field is already such a list).
  size_t at = 0;
  while (at < other.kernels.size()) {
    size_t end = other.kernels.find(", ", at);
    if (end == std::string::npos) end = other.kernels.size();
    const std::string isa = other.kernels.substr(at, end - at);
    if (!isa.empty() && (", " + kernels + ", ").find(", " + isa + ", ") == std::string::npos) {
      kernels += (kernels.empty() ? "" : ", ") + isa;
    }
    at = end + 2;
  }
  entries.insert(entries.end(), other.entries.begin(), other.entries.end());
  BuildIndex();
}

std::optional<double> Profile::Seconds(const std::string& signature, schema::DeviceKind kind,
                                       const std::string& device) const {
  auto named = by_device_.find({signature, device});
  if (named != by_device_.end()) {
    std::vector<size_t> same_kind;
    for (size_t i : named->second) {
      if (entries[i].kind == kind) same_kind.push_back(i);
    }
    if (!same_kind.empty()) return Mean(entries, same_kind);
  }
  auto any = by_kind_.find({signature, static_cast<int>(kind)});
  if (any == by_kind_.end()) return std::nullopt;
  return Mean(entries, any->second);
}

Result<Profile> ParseProfile(const std::string& json_text, const std::string& what) {
  BATON_ASSIGN_OR_RETURN(json root, internal::ParseJsonObject(json_text, what, "profile"));
  const json* version = internal::Field(root, "baton_profile");
  if (version == nullptr) {
    return Fail(what + ": not a profile (no \"baton_profile\" version field; write one with "
                "`baton profile`)");
  }
  if (!version->is_number_integer() || version->get<int64_t>() != kProfileFormatVersion) {
    return Fail(what + ": profile format version " + version->dump() + " is not supported (this "
                "baton reads version " + std::to_string(kProfileFormatVersion) + ")");
  }
  Profile p;
  p.source = what;
  if (const std::string* plan = internal::StringField(root, "plan")) p.plan = *plan;
  if (const json* runs = internal::Field(root, "runs"); runs && runs->is_number_integer()) {
    p.runs = static_cast<int>(runs->get<int64_t>());
  }
  if (const json* kernels = internal::Field(root, "kernels"); kernels && !kernels->is_null()) {
    if (!kernels->is_string()) return Fail(what + ": 'kernels' must be a string");
    p.kernels = kernels->get<std::string>();
  }
  BATON_ASSIGN_OR_RETURN(const json* entries,
                         internal::ListField(root, "entries", internal::ListNeed::kRequired, what));
  for (size_t i = 0; i < entries->size(); ++i) {
    BATON_ASSIGN_OR_RETURN(ProfileEntry e,
                           ParseEntry((*entries)[i], what + ": entries[" + std::to_string(i) + "]"));
    p.entries.push_back(std::move(e));
  }
  p.BuildIndex();
  return p;
}

Result<Profile> LoadProfile(const std::string& path) {
  BATON_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseProfile(text, path);
}

std::string ProfileJson(const Profile& profile) {
  nlohmann::ordered_json root;
  root["baton_profile"] = kProfileFormatVersion;
  root["plan"] = profile.plan;
  root["runs"] = profile.runs;
  if (!profile.kernels.empty()) root["kernels"] = profile.kernels;
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const ProfileEntry& e : profile.entries) {
    nlohmann::ordered_json j;
    j["node"] = e.node;
    j["op"] = e.op;
    j["device"] = e.device;
    j["kind"] = DeviceKindName(e.kind);
    j["inputs"] = OperandsJson(e.inputs);
    j["outputs"] = OperandsJson(e.outputs);
    j["median_s"] = e.median_s;
    j["min_s"] = e.min_s;
    j["runs"] = e.runs;
    entries.push_back(std::move(j));
  }
  root["entries"] = std::move(entries);
  return root.dump(2) + "\n";
}

}  // namespace baton::planner
