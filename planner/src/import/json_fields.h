#pragma once
// Reading the JSON the planner takes in (graph JSON, target JSON): the
// document, named list entries, and fields of a given type. Every error is
// prefixed with `where` ("<file>: <entry>") and names the field. Host only.

#include <nlohmann/json.hpp>
#include <string>

#include "baton/planner/result.h"

namespace baton::planner::internal {

using json = nlohmann::json;

// `text` as a JSON object; `kind` ("graph", "target") says what it describes.
inline Result<json> ParseJsonObject(const std::string& text, const std::string& what,
                                    const char* kind) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    return Fail(what + ": invalid JSON: " + e.what());
  }
  if (!root.is_object()) return Fail(what + ": the " + kind + " must be a JSON object");
  return root;
}

// obj[key], or nullptr when obj is not an object or has no such key.
inline const json* Field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// obj[key] if it is a string, else nullptr.
inline const std::string* StringField(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  return v != nullptr && v->is_string() ? v->get_ptr<const std::string*>() : nullptr;
}

// obj[key] as a string, `fallback` when absent; otherwise the error
// "<where>: '<key>' must be a string".
inline Result<std::string> OptionalString(const json& obj, const char* key,
                                          const std::string& fallback, const std::string& where) {
  const json* v = Field(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) return Fail(where + ": '" + key + "' must be a string");
  return v->get<std::string>();
}

enum class ListNeed { kOptional, kRequired, kNonEmpty };

// obj[key] as a list (an absent optional list reads as empty). Otherwise the
// error "<where>: '<key>' must be a list" (or "a non-empty list").
inline Result<const json*> ListField(const json& obj, const char* key, ListNeed need,
                                     const std::string& where) {
  static const json kEmpty = json::array();
  const json* v = Field(obj, key);
  if (v == nullptr && need == ListNeed::kOptional) return &kEmpty;
  if (need == ListNeed::kNonEmpty && (v == nullptr || !v->is_array() || v->empty())) {
    return Fail(where + ": '" + key + "' must be a non-empty list");
  }
  if (v == nullptr || !v->is_array()) return Fail(where + ": '" + key + "' must be a list");
  return v;
}

// Entry `index` of the list `list` of named objects: its "name", and the
// prefix of its errors once the name is known, "<what>: <kind> '<name>'".
// Graph names must be non-empty; target names only strings.
struct NamedEntry {
  std::string name;
  std::string where;
};

inline Result<NamedEntry> ReadNamedEntry(const json& entry, const std::string& what,
                                         const char* list, size_t index, const char* kind,
                                         bool non_empty) {
  const std::string* name = StringField(entry, "name");
  if (name == nullptr || (non_empty && name->empty())) {
    return Fail(what + ": " + list + "[" + std::to_string(index) + "]: needs a " +
                (non_empty ? "non-empty " : "") + "string 'name'");
  }
  return NamedEntry{*name, what + ": " + kind + " '" + *name + "'"};
}

}  // namespace baton::planner::internal
