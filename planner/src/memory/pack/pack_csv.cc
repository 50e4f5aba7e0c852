// MiniMalloc CSV for the packer: `id,lower,upper,size[,offset]`.

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "baton/planner/memory/pack.h"

namespace baton::planner {
namespace {

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

// Strict int64: optional sign, digits only, no overflow.
bool ParseInt64(const std::string& s, int64_t* out) {
  size_t k = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) k = 1;
  if (k == s.size()) return false;
  uint64_t value = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[k] - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

}  // namespace

Result<std::vector<PackBuffer>> ReadPackCsv(const std::string& text) {
  std::vector<PackBuffer> buffers;
  std::map<std::string, int> column;  // name -> field index
  std::map<std::string, int> first_line;
  size_t width = 0;
  int line_no = 0;
  size_t pos = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // UTF-8 byte order mark
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (line.empty()) continue;
    const std::vector<std::string> fields = SplitFields(line);
    if (column.empty()) {
      for (size_t k = 0; k < fields.size(); ++k) {
        const std::string& name = fields[k];
        if (name != "id" && name != "lower" && name != "upper" && name != "size" &&
            name != "offset") {
          return Fail(where + "unknown column '" + name +
                      "' (expected id, lower, upper, size and optionally offset)");
        }
        if (!column.emplace(name, static_cast<int>(k)).second) {
          return Fail(where + "column '" + name + "' appears twice");
        }
      }
      for (const char* name : {"id", "lower", "upper", "size"}) {
        if (column.count(name) == 0) return Fail(where + "header lacks the column '" + name + "'");
      }
      width = fields.size();
      continue;
    }
    if (fields.size() != width) {
      return Fail(where + "expected " + std::to_string(width) + " fields, got " +
                  std::to_string(fields.size()));
    }
    PackBuffer b;
    b.id = fields[column["id"]];
    if (b.id.empty()) return Fail(where + "empty id");
    for (const auto& [name, out] : {std::pair<const char*, int64_t*>{"lower", &b.lower},
                                    {"upper", &b.upper},
                                    {"size", &b.size}}) {
      const std::string& field = fields[column[name]];
      if (!ParseInt64(field, out)) {
        return Fail(where + name + " '" + field + "' is not an integer");
      }
    }
    if (b.upper <= b.lower) {
      return Fail(where + "upper (" + std::to_string(b.upper) + ") must be greater than lower (" +
                  std::to_string(b.lower) + ")");
    }
    if (b.size <= 0) return Fail(where + "size must be > 0, got " + std::to_string(b.size));
    const auto [it, inserted] = first_line.emplace(b.id, line_no);
    if (!inserted) {
      return Fail(where + "duplicate id '" + b.id + "' (first on line " +
                  std::to_string(it->second) + ")");
    }
    buffers.push_back(std::move(b));
  }
  if (column.empty()) return Fail("line 1: missing header 'id,lower,upper,size'");
  return buffers;
}

std::string WritePackCsv(const std::vector<PackBuffer>& buffers,
                         const std::vector<int64_t>& offsets) {
  const bool with_offsets = offsets.size() == buffers.size();
  std::string out = with_offsets ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PackBuffer& b = buffers[i];
    out += b.id + "," + std::to_string(b.lower) + "," + std::to_string(b.upper) + "," +
           std::to_string(b.size);
    if (with_offsets) out += "," + std::to_string(offsets[i]);
    out += "\n";
  }
  return out;
}

}  // namespace baton::planner
