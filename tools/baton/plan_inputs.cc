#include "plan_inputs.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
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
  // A regular file goes straight into the aligned buffer: one copy of a
  // 21 MB plan instead of two (a string, then the aligned copy). Anything
  // else (a pipe, /proc's files, which say 0 bytes, a file that changed size
  // while read, or was replaced by another kind between the check and the
  // open) through planner::ReadFile's stream.
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return planner::Fail(path + ": cannot open");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.good() ? static_cast<std::streamoff>(in.tellg()) : -1;
    if (size > 0 && static_cast<uintmax_t>(size) <= std::numeric_limits<size_t>::max() / 2) {
      in.seekg(0, std::ios::beg);
      linux_port::AlignedBytes bytes(static_cast<size_t>(size));
      if (bytes.data() == nullptr) {
        return planner::Fail(path + ": cannot allocate " + std::to_string(size) + " bytes");
      }
      in.read(reinterpret_cast<char*>(bytes.mutable_data()), size);
      if (in.gcount() == size && in.peek() == std::ifstream::traits_type::eof()) return bytes;
    }
  }
  BATON_ASSIGN_OR_RETURN(std::string text, planner::ReadFile(path));
  return linux_port::AlignedBytes(text.data(), text.size());
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
