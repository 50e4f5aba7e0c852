#pragma once
// A scratch directory of this test process: BATON_BINARY_DIR/<name>.<pid>,
// removed (with its contents) when the process exits. ctest runs each
// gtest case in its own process, several at once: a generated-cases folder
// shared between them was rewritten by one test while another read it,
// which made CustomOpPlan.RoundTripKeepsEveryAttributeKindAndRuns and
// RegionsTest.RegionCostIsItsNodesPlusOneLaunch fail now and then.

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace baton::test {

inline std::string ProcessScratchDir(const std::string& name) {
  static std::string* const dirs = [] {
    static std::string list;
    std::atexit([] {
      if (!list.empty()) {
        const int rc = std::system(("rm -rf" + list).c_str());
        (void)rc;
      }
    });
    return &list;
  }();
  const std::string d = std::string(BATON_BINARY_DIR) + "/" + name + "." +
                        std::to_string(static_cast<long>(getpid()));
  *dirs += " '" + d + "'";
  return d;
}

}  // namespace baton::test
