// .npy reading: numpy's own files (C and Fortran order) and hand-made bad
// headers (issue 13: a 23-digit dimension aborted, Fortran order was read as
// C order, a dimension of -3 was read as 3).

#include "baton/planner/io/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/pipe_feeder.h"

namespace baton::planner {
namespace {

const std::string kDir = std::string(BATON_BINARY_DIR) + "/npy_test";

// A version 1.0 .npy file with this header dict and data.
std::string Npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string ErrorOf(const std::string& dict, const std::string& data) {
  Result<NpyArray> r = ParseNpy(Npy(dict, data), "x.npy");
  return r.ok() ? "(parsed)" : r.error();
}

// numpy writes a transposed (Fortran-contiguous) array with
// fortran_order True; reading it must give the C-order values numpy reports.
TEST(Npy, FortranOrderIsReorderedToCOrder) {
  ASSERT_EQ(std::system(("mkdir -p " + kDir).c_str()), 0);
  const std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "a = np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 1.5)\n"
      "np.save(d + '/f.npy', a)\n"
      "np.save(d + '/c.npy', np.ascontiguousarray(a))\n"
      "b = np.asfortranarray(np.arange(6, dtype=np.int64).reshape(3, 2))\n"
      "np.save(d + '/fi.npy', b)\n"
      "np.save(d + '/ci.npy', np.ascontiguousarray(b))\n";
  const std::string py = kDir + "/make.py";
  FILE* f = std::fopen(py.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(script.c_str(), f);
  std::fclose(f);
  ASSERT_EQ(std::system((std::string(BATON_PYTHON) + " " + py + " " + kDir).c_str()), 0);
  for (const char* name : {"f", "fi"}) {
    const std::string fortran_path = kDir + "/" + name + ".npy";
    const std::string c_path = kDir + "/c" + std::string(name).substr(1) + ".npy";
    ASSERT_NE(ReadFile(fortran_path).value().find("'fortran_order': True"), std::string::npos);
    Result<NpyArray> fortran = ReadNpy(fortran_path);
    Result<NpyArray> c = ReadNpy(c_path);
    ASSERT_TRUE(fortran.ok()) << fortran.error();
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(fortran->shape, c->shape);
    EXPECT_EQ(fortran->dtype, c->dtype);
    EXPECT_EQ(fortran->data, c->data) << name;
  }
}

TEST(Npy, HugeDimensionIsAnError) {
  EXPECT_NE(ErrorOf("{'descr': '<f4', 'fortran_order': False, 'shape': (12345678901234567890123,), }", "")
                .find("dimension 12345678901234567890123 in the .npy shape is too large"),
            std::string::npos);
  // Dimensions that fit but whose product overflows 64 bits.
  std::string e = ErrorOf(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999, 999999999999999999), }",
      "abcd");
  EXPECT_NE(e.find("does not match the 4 data bytes"), std::string::npos) << e;
}

TEST(Npy, NegativeDimensionIsAnError) {
  const std::string e = ErrorOf("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
                                std::string(12, '\0'));
  EXPECT_NE(e.find("negative dimension -3"), std::string::npos) << e;
}

TEST(Npy, MalformedHeadersAreErrors) {
  const std::string data(12, '\0');
  const std::pair<const char*, const char*> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, }", "needs 'descr', 'fortran_order' and 'shape'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }", "must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.5,), }", "tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 3, }", "expected '('"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", "unsupported dtype '>f4'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", "text after the dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", "(4) does not match the 12"},
  };
  for (const auto& [dict, message] : cases) {
    const std::string e = ErrorOf(dict, data);
    EXPECT_NE(e.find(message), std::string::npos) << dict << " -> " << e;
    EXPECT_EQ(e.rfind("x.npy: ", 0), 0u) << e;
  }
}

TEST(Npy, AcceptsWhatNumpyAccepts) {
  const std::string data(12, '\0');
  for (const char* dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                           "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<f4\"}",
                           "{'descr':'<f4','fortran_order':False,'shape':(1, 3)}"}) {
    Result<NpyArray> r = ParseNpy(Npy(dict, data), "x.npy");
    ASSERT_TRUE(r.ok()) << dict << ": " << r.error();
    EXPECT_EQ(r->elements(), 3);
  }
  Result<NpyArray> empty =
      ParseNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", ""), "x.npy");
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->elements(), 0);
}

// ReadFile reads a regular file in one sized read and a pipe (no size) as a
// stream: both return every byte, NULs included; a missing file is an error.
TEST(ReadFile, RegularFilesAndPipesWhole) {
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes += static_cast<char>(i * 7 % 251);
  bytes[5] = '\0';
  const std::string path = std::string(BATON_BINARY_DIR) + "/read_file_test.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  Result<std::string> file = ReadFile(path);
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_TRUE(*file == bytes) << file->size() << " of " << bytes.size() << " bytes";

  test::PipeFeeder pipe(bytes);
  ASSERT_TRUE(pipe.ok());
  Result<std::string> piped = ReadFile(pipe.Path());
  pipe.Finish();
  ASSERT_TRUE(piped.ok()) << piped.error();
  EXPECT_TRUE(*piped == bytes) << piped->size() << " of " << bytes.size() << " bytes";

  EXPECT_FALSE(ReadFile(path + ".missing").ok());
  // A directory is not read as a file of some size: as before, it gives
  // no bytes or an error, never a crash.
  Result<std::string> dir = ReadFile(BATON_BINARY_DIR);
  EXPECT_TRUE(!dir.ok() || dir->empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace baton::planner
