#include "baton/planner/io/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace baton::planner {
namespace {

const char* DescrFor(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
  }
  return "";
}

bool DTypeForDescr(const std::string& d, DType* out) {
  if (d == "<f4") { *out = DType::Float32; return true; }
  if (d == "<i4") { *out = DType::Int32; return true; }
  if (d == "<i8") { *out = DType::Int64; return true; }
  if (d == "|u1" || d == "<u1") { *out = DType::UInt8; return true; }
  if (d == "|i1" || d == "<i1") { *out = DType::Int8; return true; }
  return false;
}

// Value of `'key': <value>` in the header dict, as raw text up to the next
// top-level comma or closing brace.
bool HeaderField(const std::string& header, const std::string& key, std::string* out) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return false;
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  int depth = 0;
  size_t start = i;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) return false;
  }
  if (depth == 0 && i < header.size() && header[i] == ')') ++i;
  *out = header.substr(start, i - start);
  return true;
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
  std::string descr, fortran, shape_text;
  if (!HeaderField(header, "descr", &descr) || !HeaderField(header, "fortran_order", &fortran) ||
      !HeaderField(header, "shape", &shape_text)) {
    return Fail(what + ": malformed .npy header");
  }
  NpyArray array;
  std::string d = descr;
  d.erase(0, d.find_first_not_of(" '\""));
  d.erase(d.find_last_not_of(" '\"") + 1);
  if (!DTypeForDescr(d, &array.dtype)) {
    return Fail(what + ": unsupported dtype '" + d + "' (float32, int32, int64, uint8, int8)");
  }
  if (fortran.find("True") != std::string::npos) return Fail(what + ": Fortran-order arrays are not supported");
  // Dimensions up to 18 digits fit int64 (std::stoll would throw beyond);
  // the element count may not exceed what the file could hold.
  std::string digits;
  uint64_t count = 1;
  bool too_large = false;
  for (size_t i = 0; i <= shape_text.size(); ++i) {
    const char c = i < shape_text.size() ? shape_text[i] : ',';
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (!digits.empty()) {
      if (digits.size() > 18) {
        too_large = true;
        break;
      }
      const int64_t dim = std::stoll(digits);
      array.shape.push_back(dim);
      if (dim != 0 && count > bytes.size() / static_cast<uint64_t>(dim)) too_large = true;
      count *= static_cast<uint64_t>(dim);
      digits.clear();
    }
  }
  if (too_large) {
    return Fail(what + ": shape " + shape_text + " is larger than the file (" +
                std::to_string(bytes.size()) + " bytes)");
  }
  size_t need = static_cast<size_t>(array.elements()) * DTypeBytes(array.dtype);
  size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != need) {
    return Fail(what + ": expected " + std::to_string(need) + " data bytes, found " +
                std::to_string(bytes.size() - data_start));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Fail(path + ": read error");
  return ss.str();
}

Check WriteFileAtomic(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Fail(path + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
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
