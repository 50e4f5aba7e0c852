#pragma once
// .npy read and write (format versions 1.0-3.0, little-endian) for float32,
// int32, int64, uint8 and int8 arrays. Host only. Reading parses the header
// strictly (docs/formats.md "npy"): a malformed header, a negative or
// oversized dimension, or a shape that does not match the data bytes is an
// error; Fortran-order data is reordered into C order. Writing is C order.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baton/planner/graph.h"
#include "baton/planner/result.h"

namespace baton::planner {

struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian element bytes, C order (also when read from a Fortran-order file)

  int64_t elements() const;
  std::vector<float> FloatData() const;  // empty unless float32
};

Result<NpyArray> ParseNpy(const std::string& bytes, const std::string& what);
Result<NpyArray> ReadNpy(const std::string& path);
std::string SerializeNpy(const NpyArray& array);
// Writes atomically (temporary file + rename).
Check WriteNpy(const std::string& path, const NpyArray& array);

// Whole-file helpers used by the tools; errors name the path.
Result<std::string> ReadFile(const std::string& path);
// Reads `path` whole into the `size` bytes `buffer(size)` returns (null: the
// memory could not be had, an error): a regular file in one sized read
// straight into it; a pipe, a /proc file (which says 0 bytes) or a file that
// changed size while read is streamed first, then copied into it. `buffer`
// may be called twice (a sized read that came out wrong); the last call's
// memory holds the file.
Check ReadFileInto(const std::string& path, const std::function<char*(size_t)>& buffer);
// Writes to PATH.tmp then renames, so a failure leaves nothing partial.
Check WriteFileAtomic(const std::string& path, const std::string& bytes);

}  // namespace baton::planner
