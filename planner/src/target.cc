#include "baton/planner/target.h"

#include <algorithm>
#include <set>

#include "baton/parallel.h"
#include "baton/planner/graph.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/postprocess.h"
#include "baton/planner/passes/regions.h"
#include "import/json_fields.h"

namespace baton::planner {
namespace {

using internal::json;
using internal::ListNeed;

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

Result<double> Number(const json& obj, const char* key, double fallback, const std::string& where) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_number()) return Fail(where + ": '" + key + "' must be a number");
  double v = obj[key].get<double>();
  if (!(v >= 0)) return Fail(where + ": '" + key + "' must be non-negative");
  return v;
}

Result<std::vector<std::string>> NameList(const json& obj, const char* key, bool* all,
                                          const std::string& where) {
  std::vector<std::string> out;
  *all = false;
  if (!obj.contains(key)) return out;
  const json& v = obj[key];
  if (v.is_string()) {
    if (v.get<std::string>() != "*") return Fail(where + ": '" + key + "' must be \"*\" or a list");
    *all = true;
    return out;
  }
  if (!v.is_array()) return Fail(where + ": '" + key + "' must be \"*\" or a list of names");
  for (const json& e : v) {
    if (!e.is_string()) return Fail(where + ": '" + key + "' entries must be strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<TargetDomain> ParseDomain(const json& d, const std::string& what, size_t index,
                                 const Target& t) {
  BATON_ASSIGN_OR_RETURN(internal::NamedEntry e,
                         internal::ReadNamedEntry(d, what, "domains", index, "domain", false));
  if (t.FindDomain(e.name) >= 0) return Fail(e.where + ": duplicate domain name");
  TargetDomain dom;
  dom.name = e.name;
  if (!d.contains("bytes") || !d["bytes"].is_number_unsigned() || d["bytes"].get<uint64_t>() == 0) {
    return Fail(e.where + ": 'bytes' must be a positive integer");
  }
  dom.bytes = d["bytes"].get<uint64_t>();
  if (d.contains("alignment")) {
    // The plan stores it as a 32-bit unsigned integer.
    constexpr uint64_t kMaxAlignment = uint64_t{1} << 31;
    if (!d["alignment"].is_number_unsigned() || !IsPowerOfTwo(d["alignment"].get<uint64_t>()) ||
        d["alignment"].get<uint64_t>() > kMaxAlignment) {
      return Fail(e.where + ": 'alignment' must be a power of two from 1 to 2^31");
    }
    dom.alignment = static_cast<uint32_t>(d["alignment"].get<uint64_t>());
  }
  // Tensors are placed at multiples of the alignment from the arena's start,
  // and every dtype (int64: 8 bytes) and kernel workspace needs its natural
  // alignment, so a smaller value is raised: the plan then asks the caller
  // for an 8-aligned arena (Executor::Init checks it).
  if (dom.alignment < kMinDomainAlignment) dom.alignment = kMinDomainAlignment;
  return dom;
}

Result<schema::DeviceKind> ParseDeviceKind(const json& d, const std::string& where) {
  const std::string* found = internal::StringField(d, "kind");
  if (found == nullptr) {
    return Fail(where + ": needs a string 'kind' (cpu, npu, gpu or dsp)");
  }
  const std::string& kind = *found;
  if (kind == "cpu") return schema::DeviceKind::Cpu;
  if (kind == "npu") return schema::DeviceKind::Npu;
  if (kind == "gpu") return schema::DeviceKind::Gpu;
  if (kind == "dsp") return schema::DeviceKind::Dsp;
  return Fail(where + ": unknown kind '" + kind + "' (cpu, npu, gpu or dsp)");
}

// The device's "cost" object; the defaults of Cost when absent.
Result<Cost> ParseCost(const json& d, const std::string& where) {
  Cost cost;
  if (!d.contains("cost")) return cost;
  const json& c = d["cost"];
  if (!c.is_object()) return Fail(where + ": 'cost' must be an object");
  BATON_ASSIGN_OR_RETURN(cost.macs_per_s, Number(c, "macs_per_s", 1e9, where + ".cost"));
  BATON_ASSIGN_OR_RETURN(cost.bytes_per_s, Number(c, "bytes_per_s", 1e9, where + ".cost"));
  BATON_ASSIGN_OR_RETURN(cost.launch_s, Number(c, "launch_s", 0, where + ".cost"));
  if (cost.macs_per_s <= 0 || cost.bytes_per_s <= 0) {
    return Fail(where + ": cost rates must be positive");
  }
  return cost;
}

// The device's "op_costs" object: op name -> {"seconds", "per_element_s"}.
Result<std::map<std::string, OpCost>> ParseOpCosts(const json& d, const std::string& where) {
  std::map<std::string, OpCost> out;
  if (!d.contains("op_costs")) return out;
  const json& costs = d["op_costs"];
  if (!costs.is_object()) {
    return Fail(where +
                ": 'op_costs' must be an object of op name -> {\"seconds\", "
                "\"per_element_s\"}");
  }
  for (auto it = costs.begin(); it != costs.end(); ++it) {
    const std::string at = where + ".op_costs['" + it.key() + "']";
    if (it.key().empty()) return Fail(where + ": 'op_costs' has an empty op name");
    const json& c = it.value();
    if (!c.is_object())
      return Fail(at + ": must be an object with 'seconds' and/or 'per_element_s'");
    for (auto field = c.begin(); field != c.end(); ++field) {
      if (field.key() != "seconds" && field.key() != "per_element_s") {
        return Fail(at + ": unknown field '" + field.key() + "' (seconds, per_element_s)");
      }
    }
    if (!c.contains("seconds") && !c.contains("per_element_s")) {
      return Fail(at + ": needs 'seconds' or 'per_element_s'");
    }
    OpCost cost;
    BATON_ASSIGN_OR_RETURN(cost.seconds, Number(c, "seconds", 0, at));
    BATON_ASSIGN_OR_RETURN(cost.per_element_s, Number(c, "per_element_s", 0, at));
    out.emplace(it.key(), cost);
  }
  return out;
}

// Devices come after domains, which they name.
Result<TargetDevice> ParseDevice(const json& d, const std::string& what, size_t index,
                                 const Target& t) {
  BATON_ASSIGN_OR_RETURN(internal::NamedEntry e,
                         internal::ReadNamedEntry(d, what, "devices", index, "device", false));
  const std::string& where = e.where;
  if (t.FindDevice(e.name) >= 0) return Fail(where + ": duplicate device name");
  TargetDevice dev;
  dev.name = e.name;
  BATON_ASSIGN_OR_RETURN(dev.kind, ParseDeviceKind(d, where));
  BATON_ASSIGN_OR_RETURN(dev.ops, NameList(d, "ops", &dev.all_ops, where));
  if (!d.contains("ops")) dev.all_ops = dev.kind == schema::DeviceKind::Cpu;
  for (const std::string& op : dev.ops) {
    if (IsPostprocessOp(op) && dev.kind != schema::DeviceKind::Cpu) {
      return Fail(where + ": lists '" + op + "', a post-processing op whose kernel runs on " +
                  "CPU devices only (this device is kind '" + DeviceKindName(dev.kind) + "')");
    }
  }
  BATON_ASSIGN_OR_RETURN(dev.dtypes, NameList(d, "dtypes", &dev.all_dtypes, where));
  if (!d.contains("dtypes")) dev.dtypes = {"float32"};
  BATON_ASSIGN_OR_RETURN(dev.cost, ParseCost(d, where));
  BATON_ASSIGN_OR_RETURN(dev.op_costs, ParseOpCosts(d, where));
  if (d.contains("runtime")) {
    if (!d["runtime"].is_string() || d["runtime"].get<std::string>().empty()) {
      return Fail(where +
                  ": 'runtime' must be a non-empty string naming a runtime plugin "
                  "(e.g. \"armnn\")");
    }
    dev.runtime = d["runtime"].get<std::string>();
    for (const std::string& op : dev.ops) {
      if (!RegionOpSerializable(op)) {
        return Fail(where + ": 'ops' lists '" + op + "', which a region for runtime '" +
                    dev.runtime + "' cannot carry (" + RegionOpSerializableWhy(op) + ")");
      }
    }
  }
  if (d.contains("threads")) {
    const json& th = d["threads"];
    if (dev.kind != schema::DeviceKind::Cpu) {
      return Fail(where + ": 'threads' is for CPU devices only (this device is kind '" +
                  DeviceKindName(dev.kind) + "')");
    }
    if (!th.is_number_integer() || th.get<int64_t>() < 1 ||
        th.get<int64_t>() > static_cast<int64_t>(kMaxDeviceThreads)) {
      return Fail(where + ": 'threads' must be an integer from 1 to " +
                  std::to_string(kMaxDeviceThreads) + ", got " + th.dump());
    }
    dev.threads = static_cast<uint32_t>(th.get<int64_t>());
  }
  if (!d.contains("domains") || !d["domains"].is_array() || d["domains"].empty()) {
    return Fail(where + ": 'domains' must list the memories it can reach");
  }
  for (const json& dn : d["domains"]) {
    int idx = dn.is_string() ? t.FindDomain(dn.get<std::string>()) : -1;
    if (idx < 0) return Fail(where + ": unknown domain " + dn.dump());
    dev.domains.push_back(idx);
  }
  return dev;
}

// Links come after devices, whose names a DMA queue must not take.
Result<TargetLink> ParseLink(const json& l, const std::string& what, size_t index,
                             const Target& t) {
  std::string where = what + ": links[" + std::to_string(index) + "]";
  if (!l.is_object()) return Fail(where + ": must be an object");
  TargetLink link;
  link.from = l.contains("from") && l["from"].is_string() ? t.FindDomain(l["from"]) : -1;
  link.to = l.contains("to") && l["to"].is_string() ? t.FindDomain(l["to"]) : -1;
  if (link.from < 0 || link.to < 0) return Fail(where + ": 'from' and 'to' must name domains");
  if (link.from == link.to) return Fail(where + ": 'from' and 'to' are the same domain");
  if (t.FindLink(link.from, link.to)) return Fail(where + ": duplicate link");
  BATON_ASSIGN_OR_RETURN(link.bytes_per_s, Number(l, "bytes_per_s", 1e9, where));
  BATON_ASSIGN_OR_RETURN(link.latency_s, Number(l, "latency_s", 0, where));
  if (link.bytes_per_s <= 0) return Fail(where + ": 'bytes_per_s' must be positive");
  if (l.contains("queue")) {
    if (!l["queue"].is_string() || l["queue"].get<std::string>().empty()) {
      return Fail(where + ": 'queue' must be a non-empty string");
    }
    link.queue = l["queue"].get<std::string>();
    if (t.FindDevice(link.queue) >= 0) {
      return Fail(where + ": queue '" + link.queue + "' has the name of a device");
    }
  }
  return link;
}

}  // namespace

uint32_t TargetDevice::ThreadsFor(const std::string& op) const {
  if (threads <= 1) return 1;
  const OpDef* def = FindOp(op);  // null for custom ops and __copy
  return def != nullptr && def->has_kernel && OpSplitsAcrossThreads(def->kernel_op) ? threads : 1;
}

double ParallelSpeedup(uint32_t threads) {
  if (threads <= 1) return 1.0;
  return 1.0 / (kSerialFraction + (1.0 - kSerialFraction) / threads);
}

const char* DeviceKindName(schema::DeviceKind kind) {
  switch (kind) {
    case schema::DeviceKind::Cpu: return "cpu";
    case schema::DeviceKind::Npu: return "npu";
    case schema::DeviceKind::Gpu: return "gpu";
    case schema::DeviceKind::Dsp: return "dsp";
    case schema::DeviceKind::Dma: return "dma";
  }
  return "?";
}

bool TargetDevice::Runs(const std::string& op) const {
  if (!runtime.empty() && !RegionOpSerializable(op)) return false;
  // Baton's own post-processing ops are CPU kernels: "*" on a CPU device
  // includes them, and only CPU devices may list them (ParseDevice).
  if (IsPostprocessOp(op)) {
    return kind == schema::DeviceKind::Cpu &&
           (all_ops || std::find(ops.begin(), ops.end(), op) != ops.end());
  }
  return (all_ops && !IsCustomOp(op)) || std::find(ops.begin(), ops.end(), op) != ops.end();
}
bool TargetDevice::Handles(const std::string& dtype) const {
  return all_dtypes || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}
bool TargetDevice::Reaches(int domain) const {
  return std::find(domains.begin(), domains.end(), domain) != domains.end();
}

int Target::FindDevice(const std::string& n) const {
  for (size_t i = 0; i < devices.size(); ++i) if (devices[i].name == n) return static_cast<int>(i);
  return -1;
}
int Target::FindDomain(const std::string& n) const {
  for (size_t i = 0; i < domains.size(); ++i) if (domains[i].name == n) return static_cast<int>(i);
  return -1;
}
const TargetLink* Target::FindLink(int from, int to) const {
  for (const TargetLink& l : links) if (l.from == from && l.to == to) return &l;
  return nullptr;
}

Result<Target> ParseTarget(const std::string& text, const std::string& what) {
  BATON_ASSIGN_OR_RETURN(json root, internal::ParseJsonObject(text, what, "target"));
  Target t;
  BATON_ASSIGN_OR_RETURN(t.name, internal::OptionalString(root, "name", "target", what));
  BATON_ASSIGN_OR_RETURN(const json* domains,
                         internal::ListField(root, "domains", ListNeed::kNonEmpty, what));
  for (size_t i = 0; i < domains->size(); ++i) {
    BATON_ASSIGN_OR_RETURN(TargetDomain dom, ParseDomain((*domains)[i], what, i, t));
    t.domains.push_back(std::move(dom));
  }
  BATON_ASSIGN_OR_RETURN(const json* devices,
                         internal::ListField(root, "devices", ListNeed::kNonEmpty, what));
  for (size_t i = 0; i < devices->size(); ++i) {
    BATON_ASSIGN_OR_RETURN(TargetDevice dev, ParseDevice((*devices)[i], what, i, t));
    t.devices.push_back(std::move(dev));
  }
  BATON_ASSIGN_OR_RETURN(std::string fallback,
                         internal::OptionalString(root, "fallback", t.devices[0].name, what));
  t.fallback = t.FindDevice(fallback);
  if (t.fallback < 0) return Fail(what + ": 'fallback' names unknown device '" + fallback + "'");
  BATON_ASSIGN_OR_RETURN(const json* links,
                         internal::ListField(root, "links", ListNeed::kOptional, what));
  for (size_t i = 0; i < links->size(); ++i) {
    BATON_ASSIGN_OR_RETURN(TargetLink link, ParseLink((*links)[i], what, i, t));
    t.links.push_back(std::move(link));
  }
  return t;
}

Result<Target> LoadTarget(const std::string& path) {
  BATON_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseTarget(text, path);
}

std::vector<std::string> ListedCustomOps(const Target& target) {
  std::set<std::string> ops;
  for (const TargetDevice& dev : target.devices) {
    for (const std::string& op : dev.ops) {
      if (IsCustomOp(op)) ops.insert(op);
    }
  }
  return std::vector<std::string>(ops.begin(), ops.end());
}

Check DeclareCustomOp(const std::string& name, Target* target) {
  if (!IsCustomOp(name)) {
    return Fail("--custom-op '" + name +
                "': expected DOMAIN::NAME (e.g. com.example::MyOp; "
                "ops of the default ONNX domain are ai.onnx::Name)");
  }
  std::vector<std::string>& ops = target->devices[target->fallback].ops;
  if (std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
  return {};
}

Target DefaultCpuTarget() {
  Target t;
  t.name = "cpu";
  t.domains.push_back({"dram", uint64_t{1} << 32, 64});
  TargetDevice cpu;
  cpu.name = "cpu0";
  cpu.all_ops = true;
  cpu.dtypes = {"float32"};
  cpu.all_dtypes = true;
  cpu.domains = {0};
  cpu.cost = {2e9, 4e9, 2e-6};
  t.devices.push_back(cpu);
  return t;
}

}  // namespace baton::planner
