#include "baton/planner/io/npy.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace baton::planner {
namespace {

const char* DescrFor(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Bool: return "|b1";
  }
  return "";
}

bool DTypeForDescr(const std::string& d, DType* out) {
  if (d == "<f4") { *out = DType::Float32; return true; }
  if (d == "<i4") { *out = DType::Int32; return true; }
  if (d == "<i8") { *out = DType::Int64; return true; }
  if (d == "|u1" || d == "<u1") { *out = DType::UInt8; return true; }
  if (d == "|i1" || d == "<i1") { *out = DType::Int8; return true; }
  if (d == "|b1") { *out = DType::Bool; return true; }
  return false;
}

// The header dict of a .npy file, parsed as the Python literal numpy writes
// and reads: {'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple of
// ints>} in any order, keys in single or double quotes, an optional trailing
// comma, whitespace anywhere. Anything else is an error, so that no header
// is half understood.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  Result<NpyHeader> Parse() {
    NpyHeader h;
    bool has_descr = false, has_fortran = false, has_shape = false;
    BATON_TRY(Expect('{'));
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      BATON_ASSIGN_OR_RETURN(std::string key, String());
      BATON_TRY(Expect(':'));
      bool* seen = nullptr;
      if (key == "descr") {
        BATON_ASSIGN_OR_RETURN(h.descr, String());
        seen = &has_descr;
      } else if (key == "fortran_order") {
        BATON_ASSIGN_OR_RETURN(h.fortran_order, Bool());
        seen = &has_fortran;
      } else if (key == "shape") {
        BATON_ASSIGN_OR_RETURN(h.shape, Tuple());
        seen = &has_shape;
      } else {
        return Fail("unexpected key '" + key + "' in the .npy header");
      }
      if (*seen) return Fail("key '" + key + "' appears twice in the .npy header");
      *seen = true;
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != '}') return Fail("malformed .npy header: expected ',' or '}'");
    }
    ++pos_;  // '}'
    SkipSpace();
    if (pos_ != text_.size()) return Fail("malformed .npy header: text after the dict");
    if (!has_descr || !has_fortran || !has_shape) {
      return Fail("malformed .npy header: needs 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Check Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Fail(std::string("malformed .npy header: expected '") + c + "'");
    ++pos_;
    return {};
  }
  Result<std::string> String() {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("malformed .npy header: expected a string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) return Fail("malformed .npy header: unterminated string");
    std::string out = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  Result<bool> Bool() {
    SkipSpace();
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const size_t n = std::strlen(word);
      if (text_.compare(pos_, n, word) == 0) {
        pos_ += n;
        return value;
      }
    }
    return Fail("malformed .npy header: 'fortran_order' must be True or False");
  }
  // (d0, d1, ...): non-negative integers of at most 18 digits.
  Result<std::vector<int64_t>> Tuple() {
    BATON_TRY(Expect('('));
    std::vector<int64_t> dims;
    for (;;) {
      SkipSpace();
      if (Peek() == ')') break;
      if (Peek() == '-') {
        size_t end = pos_ + 1;
        while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
        return Fail("negative dimension " + text_.substr(pos_, end - pos_) + " in the .npy shape");
      }
      size_t start = pos_;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
      if (pos_ == start) return Fail("malformed .npy header: 'shape' must be a tuple of integers");
      if (pos_ - start > 18) {
        return Fail("dimension " + text_.substr(start, pos_ - start) + " in the .npy shape is too large");
      }
      dims.push_back(std::stoll(text_.substr(start, pos_ - start)));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != ')') return Fail("malformed .npy header: 'shape' must be a tuple of integers");
    }
    ++pos_;  // ')'
    return dims;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// Reorders `data` (elements of `element_bytes`, column-major over `shape`)
// into row-major order.
std::vector<uint8_t> FortranToC(const std::vector<uint8_t>& data, const std::vector<int64_t>& shape,
                                size_t element_bytes) {
  std::vector<uint8_t> out(data.size());
  const size_t rank = shape.size();
  const size_t count = element_bytes == 0 ? 0 : data.size() / element_bytes;
  std::vector<size_t> stride(rank, 1);  // column-major element strides
  for (size_t i = 1; i < rank; ++i) stride[i] = stride[i - 1] * static_cast<size_t>(shape[i - 1]);
  std::vector<int64_t> index(rank, 0);  // row-major position, last dim fastest
  for (size_t c = 0; c < count; ++c) {
    size_t f = 0;
    for (size_t i = 0; i < rank; ++i) f += static_cast<size_t>(index[i]) * stride[i];
    std::memcpy(out.data() + c * element_bytes, data.data() + f * element_bytes, element_bytes);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

}  // namespace

int64_t NpyArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> NpyArray::FloatData() const {
  if (dtype != DType::Float32) return {};
  std::vector<float> out(data.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * 4);
  return out;
}

Result<NpyArray> ParseNpy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    return Fail(what + ": not a .npy file (bad magic)");
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Fail(what + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return Fail(what + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) return Fail(what + ": truncated .npy header");
  std::string header = bytes.substr(header_start, header_len);
  Result<NpyHeader> parsed = HeaderParser(header).Parse();
  if (!parsed.ok()) return Fail(what + ": " + parsed.error());
  NpyArray array;
  if (!DTypeForDescr(parsed->descr, &array.dtype)) {
    return Fail(what + ": unsupported dtype '" + parsed->descr +
                "' (float32, int32, int64, uint8, int8, little-endian)");
  }
  array.shape = parsed->shape;
  // Checked element count: the data must be in the file, so any shape
  // needing more bytes than the file has is an error, not an overflow.
  const uint64_t element_bytes = DTypeBytes(array.dtype);
  const size_t data_start = header_start + header_len;
  const uint64_t available = bytes.size() - data_start;
  uint64_t elements = 1;
  bool too_large = false;
  for (int64_t d : array.shape) {
    if (d == 0) {
      elements = 0;
      too_large = false;
      break;
    }
    if (elements > available / static_cast<uint64_t>(d)) too_large = true;
    if (!too_large) elements *= static_cast<uint64_t>(d);
  }
  if (too_large || elements * element_bytes != available) {
    std::string shape = "(";
    for (size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
    shape += ")";
    return Fail(what + ": shape " + shape + " does not match the " + std::to_string(available) +
                " data bytes in the file" +
                (too_large ? "" : " (needs " + std::to_string(elements * element_bytes) + ")"));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  if (parsed->fortran_order) array.data = FortranToC(array.data, array.shape, element_bytes);
  return array;
}

Result<NpyArray> ReadNpy(const std::string& path) {
  BATON_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpy(bytes, path);
}

std::string SerializeNpy(const NpyArray& array) {
  std::ostringstream shape;
  shape << "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    shape << array.shape[i] << (array.shape.size() == 1 ? "," : (i + 1 < array.shape.size() ? ", " : ""));
  }
  shape << ")";
  std::string header = std::string("{'descr': '") + DescrFor(array.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape.str() + ", }";
  size_t total = 10 + header.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  header.append(pad, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

Check WriteNpy(const std::string& path, const NpyArray& array) {
  return WriteFileAtomic(path, SerializeNpy(array));
}

Result<std::string> ReadFile(const std::string& path) {
  std::string bytes;
  BATON_TRY(ReadFileInto(path, [&bytes](size_t size) {
    bytes.assign(size, '\0');
    return bytes.data();
  }));
  return bytes;
}

Check ReadFileInto(const std::string& path, const std::function<char*(size_t)>& buffer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(path + ": cannot open");
  // A regular file is read once, straight into the caller's memory of its
  // size: streaming it through a stringbuf copied a 21 MB plan several
  // times as the buffer grew (0.5 s of `baton run`'s start), and `baton
  // run` wants it 64-byte aligned. Pipes, directories and other special
  // files take the streaming path (a directory's end is a meaningless size).
  std::error_code ec;
  std::streamoff size = -1;
  if (std::filesystem::is_regular_file(path, ec)) {
    in.seekg(0, std::ios::end);
    if (in.good()) size = static_cast<std::streamoff>(in.tellg());
  }
  if (size >= 0 && static_cast<uintmax_t>(size) <= std::string().max_size()) {
    in.seekg(0, std::ios::beg);
    char* p = buffer(static_cast<size_t>(size));
    if (p == nullptr && size > 0) {
      return Fail(path + ": cannot allocate " + std::to_string(size) + " bytes");
    }
    if (size > 0) in.read(p, size);
    if (in.gcount() == size && in.peek() == std::ifstream::traits_type::eof()) return {};
    // The size was wrong (a file that changed under us, or one of /proc's,
    // which say 0): read it again as a stream from the start.
    in.clear();
    in.seekg(0, std::ios::beg);
    if (!in) return Fail(path + ": read error");
  } else {
    in.clear();
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Fail(path + ": read error");
  const std::string streamed = ss.str();
  char* p = buffer(streamed.size());
  if (p == nullptr && !streamed.empty()) {
    return Fail(path + ": cannot allocate " + std::to_string(streamed.size()) + " bytes");
  }
  if (!streamed.empty()) std::memcpy(p, streamed.data(), streamed.size());
  return {};
}

Check WriteFileAtomic(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Fail(path + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();  // a full disk may only show when the buffer is flushed
    if (!out) {
      std::remove(tmp.c_str());
      return Fail(path + ": write error");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Fail(path + ": cannot rename temporary file into place");
  }
  return {};
}

}  // namespace baton::planner
