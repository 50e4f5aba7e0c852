// Registration of the reference kernels through their families
// (runtime/src/kernels/kernel_family.h): every op for every device kind, one
// row per op over all families (a second row would silently replace the
// first), and the registry holding exactly the rows' functions.

#include <gtest/gtest.h>

#include <string>

#include "baton/kernels.h"
#include "kernel_family.h"  // runtime/src/kernels (internal)

namespace baton {
namespace {

using kernels::KernelEntry;
using kernels::KernelFamily;

struct NamedFamily {
  const char* name;
  const KernelFamily* family;
};

#define BATON_NAMED_FAMILY(name) {#name, &kernels::k##name##Family},
constexpr NamedFamily kFamilies[] = {BATON_KERNEL_FAMILIES(BATON_NAMED_FAMILY)};
#undef BATON_NAMED_FAMILY

bool HasKind(const KernelEntry& e, uint32_t kind) { return ((e.kinds >> kind) & 1u) != 0; }

TEST(KernelRegistryTest, EveryOpForEveryDeviceKind) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  for (Op op : schema::EnumValuesOp()) {
    if (op == Op::Custom || op == Op::Subgraph) continue;  // keyed by name
    for (schema::DeviceKind kind : schema::EnumValuesDeviceKind()) {
      const Kernel* k = registry.Find(op, kind);
      ASSERT_NE(k, nullptr) << schema::EnumNameOp(op) << " on " << schema::EnumNameDeviceKind(kind);
      EXPECT_NE(k->prepare, nullptr) << schema::EnumNameOp(op);
    }
  }
  EXPECT_FALSE(RegisterReferenceKernels(nullptr).ok());
}

TEST(KernelFamilyTest, EveryOpHasExactlyOneRow) {
  static_assert(static_cast<uint32_t>(Op::MIN) == 0, "ops are numbered from 0");
  int rows[kNumOps] = {};
  std::string owners[kNumOps];
  for (const NamedFamily& f : kFamilies) {
    EXPECT_GT(f.family->count, 0u) << f.name;
    for (uint32_t i = 0; i < f.family->count; ++i) {
      const KernelEntry& e = f.family->entries[i];
      const auto op = static_cast<uint32_t>(e.op);
      ASSERT_LT(op, kNumOps) << f.name << " row " << i;
      ++rows[op];
      owners[op] += std::string(owners[op].empty() ? "" : ", ") + f.name;
    }
  }
  for (uint32_t op = 0; op < kNumOps; ++op) {
    if (op == static_cast<uint32_t>(Op::Custom) || op == static_cast<uint32_t>(Op::Subgraph)) {
      EXPECT_EQ(rows[op], 0) << "Custom and Subgraph kernels are registered by name";
      continue;
    }
    EXPECT_EQ(rows[op], 1) << schema::EnumNameOp(static_cast<Op>(op)) << " has " << rows[op]
                           << " rows (families: " << owners[op] << ")";
  }
}

TEST(KernelFamilyTest, RegistryHoldsEachRowForItsKinds) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  for (const NamedFamily& f : kFamilies) {
    for (uint32_t i = 0; i < f.family->count; ++i) {
      const KernelEntry& e = f.family->entries[i];
      EXPECT_NE(e.prepare, nullptr) << f.name << " row " << i;
      EXPECT_NE(e.eval, nullptr) << f.name << " row " << i;
      EXPECT_EQ(e.kinds & ~kernels::kAllDeviceKinds, 0) << f.name << " row " << i;
      for (uint32_t kind = 0; kind < kNumDeviceKinds; ++kind) {
        const Kernel* k = registry.Find(e.op, static_cast<DeviceKind>(kind));
        if (!HasKind(e, kind)) continue;
        ASSERT_NE(k, nullptr) << f.name << " row " << i;
        EXPECT_EQ(k->prepare, e.prepare) << f.name << ": " << schema::EnumNameOp(e.op);
        EXPECT_EQ(k->eval, e.eval) << f.name << ": " << schema::EnumNameOp(e.op);
      }
    }
  }
}

TEST(KernelFamilyTest, WorkspaceBytesWithoutNodeIsZero) {
  const KernelCall call;
  EXPECT_EQ(WorkspaceBytes(call), 0u);
}

}  // namespace
}  // namespace baton
