// libFuzzer targets for the host importers (docs/fuzzing.md). One source,
// four targets chosen by BATON_FUZZ_TARGET:
//   1 fuzz_onnx         ImportOnnx (protobuf parse, ONNX shape inference,
//                       import, Validate, InferShapes, Simplify)
//   2 fuzz_graph_json   ParseGraphJson (+ Validate, InferShapes)
//   3 fuzz_target_json  ParseTarget
//   4 fuzz_npy          ParseNpy; an array it accepts must survive
//                       SerializeNpy + ParseNpy unchanged
// An importer must return an error for bad input: any exception, signal or
// sanitizer report is a crash (the baton tool catches no exceptions either).

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "baton/planner/import/import_json.h"
#include "baton/planner/import/import_onnx.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/target.h"

#if BATON_FUZZ_TARGET == 1
#include <sys/mman.h>
#endif

using namespace baton::planner;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
#if BATON_FUZZ_TARGET == 1
  // ImportOnnx reads a path: give it an in-memory file.
  static const int fd = memfd_create("fuzz.onnx", 0);
  if (fd < 0) abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) !=
                                   static_cast<ssize_t>(bytes.size())) {
    abort();
  }
  (void)ImportOnnx("/proc/self/fd/" + std::to_string(fd));
#elif BATON_FUZZ_TARGET == 2
  // Relative .npy paths resolve in a folder that does not exist.
  (void)ParseGraphJson(bytes, "/nonexistent-baton-fuzz", "fuzz.json");
#elif BATON_FUZZ_TARGET == 3
  (void)ParseTarget(bytes, "fuzz.json");
#elif BATON_FUZZ_TARGET == 4
  Result<NpyArray> a = ParseNpy(bytes, "fuzz.npy");
  if (a.ok()) {
    Result<NpyArray> b = ParseNpy(SerializeNpy(*a), "again.npy");
    if (!b.ok() || b->dtype != a->dtype || b->shape != a->shape || b->data != a->data) abort();
  }
#else
#error "BATON_FUZZ_TARGET must be 1..4"
#endif
  return 0;
}
