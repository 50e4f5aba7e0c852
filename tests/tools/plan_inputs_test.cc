// ReadAligned, what `baton run` and `baton profile` load a plan with: every
// byte of a regular file, a pipe or a /proc file, in 64-byte-aligned memory.

#include "plan_inputs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/pipe_feeder.h"

namespace baton::tool {
namespace {

std::string Pattern(size_t size) {
  std::string bytes;
  for (size_t i = 0; i < size; ++i) bytes += static_cast<char>(i * 7 % 251);
  bytes[5] = '\0';
  return bytes;
}

std::string AsString(const linux_port::AlignedBytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

bool Aligned64(const linux_port::AlignedBytes& b) {
  return reinterpret_cast<uintptr_t>(b.data()) % 64 == 0;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// Removes `path` when the test ends, passed or not.
struct RemoveAtEnd {
  std::string path;
  ~RemoveAtEnd() { std::remove(path.c_str()); }
};

TEST(ReadAligned, RegularFileWholeAndAligned) {
  const std::string path = std::string(BATON_BINARY_DIR) + "/read_aligned_test.bin";
  const RemoveAtEnd cleanup{path};
  for (size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{300001}}) {
    const std::string bytes = Pattern(size < 6 ? 6 : size).substr(0, size);
    ASSERT_NO_FATAL_FAILURE(WriteBytes(path, bytes));
    planner::Result<linux_port::AlignedBytes> read = ReadAligned(path);
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_EQ(read->size(), size);
    EXPECT_TRUE(AsString(*read) == bytes) << "size " << size;
    EXPECT_TRUE(Aligned64(*read)) << "size " << size;
  }
  // An empty file: no bytes, not an error (the plan loader then names it).
  ASSERT_NO_FATAL_FAILURE(WriteBytes(path, ""));
  planner::Result<linux_port::AlignedBytes> empty = ReadAligned(path);
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->size(), 0u);

  planner::Result<linux_port::AlignedBytes> missing = ReadAligned(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("read_aligned_test.bin.missing"), std::string::npos)
      << missing.error();
}

// A pipe has no size: the streaming fallback still returns every byte,
// aligned. /proc files say 0 bytes but have some.
TEST(ReadAligned, PipesAndProcFilesWhole) {
  const std::string bytes = Pattern(300000);
  test::PipeFeeder pipe(bytes);
  ASSERT_TRUE(pipe.ok());
  planner::Result<linux_port::AlignedBytes> piped = ReadAligned(pipe.Path());
  pipe.Finish();
  ASSERT_TRUE(piped.ok()) << piped.error();
  EXPECT_TRUE(AsString(*piped) == bytes) << piped->size() << " of " << bytes.size() << " bytes";
  EXPECT_TRUE(Aligned64(*piped));

  planner::Result<linux_port::AlignedBytes> proc = ReadAligned("/proc/self/status");
  ASSERT_TRUE(proc.ok()) << proc.error();
  EXPECT_NE(AsString(*proc).find("Name:"), std::string::npos) << proc->size() << " bytes";
}

}  // namespace
}  // namespace baton::tool
