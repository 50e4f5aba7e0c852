#pragma once
// Measured node times (`baton profile` writes them, `baton plan --profile`
// reads them; format in docs/formats.md, "baton_profile": 1). Host only.
//
// An entry is one node of a profiled plan: its kernel op, the dtype and shape
// of each input and output, the device it ran on (name and kind), and its
// measured seconds (median and minimum over `runs` runs). The cost model
// (analysis/cost.h) uses the median for any node with the same signature
// (op, input and output dtypes and shapes) on a device of the same kind;
// entries measured on a device of the same name win over other devices of
// that kind, and several equal candidates are averaged. Copies are never
// profiled: they stay on the link model.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/result.h"

namespace baton::planner {

inline constexpr int kProfileFormatVersion = 1;

// dtype and shape of one kernel operand; `present` false for an absent
// optional input.
struct OperandSignature {
  bool present = true;
  std::string dtype;
  std::vector<int64_t> shape;
};

// "Conv(float32[1,3,8,8],float32[4,3,3,3],-)->(float32[1,4,8,8])": the key
// a measurement is matched by (with the device kind).
std::string NodeSignatureText(const std::string& op, const std::vector<OperandSignature>& inputs,
                              const std::vector<OperandSignature>& outputs);

struct ProfileEntry {
  std::string node;    // informative: the profiled plan's node name
  std::string device;  // queue (device) name it ran on
  schema::DeviceKind kind = schema::DeviceKind::Cpu;
  std::string op;      // kernel op (schema Op name)
  std::vector<OperandSignature> inputs;
  std::vector<OperandSignature> outputs;
  double median_s = 0;
  double min_s = 0;
  int runs = 0;
  std::string signature;  // NodeSignatureText of the above
};

struct Profile {
  std::string source;  // file names, for messages
  std::string plan;    // informative: the profiled plan
  int runs = 0;
  // informative: the CPU kernels' instruction set ("avx2", "portable", ...;
  // empty when the file does not say)
  std::string kernels;
  std::vector<ProfileEntry> entries;

  // Appends `other`'s entries (repeated --profile); rebuilds the index.
  void Merge(const Profile& other);
  // Measured seconds for a node with `signature` on device `device` of
  // `kind`, or nullopt. Deterministic: depends only on the entries.
  std::optional<double> Seconds(const std::string& signature, schema::DeviceKind kind,
                                const std::string& device) const;
  // Whether entry `e` matches a node with `signature` on a device of `kind`.
  static bool Matches(const ProfileEntry& e, const std::string& signature,
                      schema::DeviceKind kind) {
    return e.kind == kind && e.signature == signature;
  }
  void BuildIndex();

 private:
  // (signature, kind) -> entry indices; (signature, device) -> entry indices.
  std::map<std::pair<std::string, int>, std::vector<size_t>> by_kind_;
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_device_;
};

// Parses profile JSON; errors name `what` and the field (unreadable JSON,
// a missing or unsupported "baton_profile" version, bad entries).
Result<Profile> ParseProfile(const std::string& json_text, const std::string& what);
Result<Profile> LoadProfile(const std::string& path);

// The JSON text of `profile` (entries in their order).
std::string ProfileJson(const Profile& profile);

}  // namespace baton::planner
