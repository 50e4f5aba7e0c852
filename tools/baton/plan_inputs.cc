#include "plan_inputs.h"

#include <map>
#include <string>

#include "baton/kernels.h"
#include "baton/planner/graph.h"
#include "baton/planner/io/npy.h"

namespace baton::tool {
namespace {

// "'a', 'b'": the plan's input names, for error messages.
std::string InputNames(const PlanView& view) {
  std::string names;
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    names += (i ? ", '" : "'") + view.input(i)->name()->str() + "'";
  }
  return names;
}

}  // namespace

planner::Result<linux_port::AlignedBytes> ReadAligned(const std::string& path) {
  // Straight into the aligned buffer: one copy of a 21 MB plan instead of
  // two (a string, then the aligned copy).
  linux_port::AlignedBytes bytes;
  BATON_TRY(planner::ReadFileInto(path, [&bytes](size_t size) {
    bytes = linux_port::AlignedBytes(size);
    return reinterpret_cast<char*>(bytes.mutable_data());
  }));
  return bytes;
}

planner::Check LoadRunPlan(const std::string& path, LoadedRunPlan* out) {
  BATON_ASSIGN_OR_RETURN(out->bytes, ReadAligned(path));
  LoadError error;
  if (!PlanView::Load(out->bytes.data(), out->bytes.size(), &out->view, &error).ok()) {
    return planner::Fail(path + ": " + error.text);
  }
  return {};
}

planner::Result<InputData> ReadInputs(const PlanView& view, const std::vector<std::string>& specs,
                                      int count) {
  std::map<std::string, std::string> given;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return planner::Fail("--input '" + spec + "': expected NAME=FILE.npy");
    }
    const std::string name = spec.substr(0, eq);
    if (!given.emplace(name, spec.substr(eq + 1)).second) {
      return planner::Fail("--input " + name + " is given twice");
    }
  }
  // Unknown names first: a misspelt name is the likelier mistake than a
  // forgotten input, and the message names what the plan expects.
  for (const auto& [name, file] : given) {
    bool known = false;
    for (uint32_t i = 0; i < view.num_inputs() && !known; ++i) {
      known = view.input(i)->name()->str() == name;
    }
    if (!known) {
      return planner::Fail("--input " + name + ": the plan has no input of that name (its inputs: " +
                           InputNames(view) + ")");
    }
  }
  InputData input_data(view.num_inputs());
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    const schema::Tensor* t = view.input(i);
    const std::string name = t->name()->str();
    auto it = given.find(name);
    if (it == given.end()) {
      return planner::Fail("missing --input " + name + "=FILE.npy (the plan's inputs: " +
                           InputNames(view) + ")");
    }
    BATON_ASSIGN_OR_RETURN(planner::NpyArray array, planner::ReadNpy(it->second));
    std::vector<int64_t> shape;
    if (t->shape() != nullptr) shape.assign(t->shape()->begin(), t->shape()->end());  // null: scalar
    if (array.dtype != t->dtype()) {
      return planner::Fail(it->second + ": dtype " + planner::DTypeName(array.dtype) +
                           " does not match input '" + name + "' (" +
                           planner::DTypeName(t->dtype()) + ")");
    }
    const std::string data(array.data.begin(), array.data.end());
    if (array.shape == shape) {
      input_data[i].assign(count, data);
      continue;
    }
    std::vector<int64_t> batched = shape;
    batched.insert(batched.begin(), count);
    if (array.shape != batched) {
      return planner::Fail(it->second + ": shape does not match input '" + name + "'");
    }
    for (int k = 0; k < count; ++k) {
      input_data[i].push_back(data.substr(k * t->bytes(), t->bytes()));
    }
  }
  return input_data;
}

void AddIsaOption(CLI::App* cmd, std::string* isa) {
  cmd->add_option("--isa", *isa,
                  "Instruction set of the kernels: auto (widest the CPU has), portable, avx2, "
                  "avx512, avx512vnni (x86-64), neon_dotprod (aarch64)")
      ->check(CLI::IsMember({"auto", "portable", "avx2", "avx512", "avx512vnni", "neon_dotprod"}));
}

planner::Check SelectIsa(const std::string& name) {
  if (name == "auto") return {};
  bool selected = false;
  for (KernelIsa isa : kAllKernelIsas) {
    if (name == KernelIsaName(isa)) selected = SelectKernelIsa(isa);
  }
  if (!selected) {
    return planner::Fail("--isa " + name + ": not available in this build on this CPU (active: " +
                         KernelIsaName(ActiveKernelIsa()) + ")");
  }
  return {};
}

}  // namespace baton::tool
