#include "output_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace baton::tool {
namespace {

namespace fs = std::filesystem;

// "--header h.h" or "h.h": how errors name an output.
std::string Name(const std::string& path, const std::string& flag) {
  return flag.empty() ? path : flag + " " + path;
}

// The path with `.`, `..` and symbolic links of its existing part resolved,
// so that two spellings of one file compare equal.
std::string Identity(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return fs::absolute(path).lexically_normal().string();
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// kSpecial: a device, FIFO or socket (/dev/null, /dev/stdout, a pipe).
enum class Kind { kMissing, kDirectory, kRegular, kSpecial };

Kind KindOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Kind::kMissing;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  return S_ISREG(st.st_mode) ? Kind::kRegular : Kind::kSpecial;
}

std::string TempName(const std::string& path) {
  return path + ".tmp." + std::to_string(static_cast<long>(getpid()));
}

// Writes `contents` to `path`, checking every step including the close.
planner::Check WriteWhole(const std::string& path, const std::string& contents,
                          const std::string& name) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return planner::Fail(name + ": cannot write: " + std::strerror(errno));
  bool ok = contents.empty() || std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  int saved = errno;
  if (ok && std::fflush(f) != 0) {
    ok = false;
    saved = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) return planner::Fail(name + ": write error: " + std::strerror(saved));
  return {};
}

}  // namespace

void OutputFiles::Add(const std::string& path, std::string contents, const std::string& flag) {
  files_.push_back({path, std::move(contents), flag});
}

void OutputFiles::AddDirectory(const std::string& path, const std::string& flag) {
  directories_.push_back({path, flag});
}

planner::Check OutputFiles::CheckPaths() const {
  std::vector<std::pair<std::string, std::string>> seen;  // identity, name
  for (const Directory& d : directories_) {
    if (d.path.empty()) return planner::Fail((d.flag.empty() ? "output" : d.flag) + ": empty path");
    const Kind kind = KindOf(d.path);
    if (kind == Kind::kRegular || kind == Kind::kSpecial) {
      return planner::Fail(Name(d.path, d.flag) + ": exists and is not a directory");
    }
  }
  for (const File& f : files_) {
    const std::string name = Name(f.path, f.flag);
    if (f.path.empty()) return planner::Fail((f.flag.empty() ? "output" : f.flag) + ": empty path");
    const Kind kind = KindOf(f.path);
    if (kind == Kind::kDirectory) return planner::Fail(name + ": is a directory");
    if (kind == Kind::kSpecial) continue;  // /dev/null may take several outputs
    const std::string id = Identity(f.path);
    for (const auto& [other_id, other_name] : seen) {
      if (other_id == id) {
        return planner::Fail(name + ": the same file as " + other_name +
                             "; every output needs its own path");
      }
    }
    for (const Directory& d : directories_) {
      if (Identity(d.path) == id) {
        return planner::Fail(name + ": the same path as the directory " + Name(d.path, d.flag));
      }
    }
    seen.emplace_back(id, name);
  }
  return {};
}

planner::Check OutputFiles::Commit() {
  BATON_TRY(CheckPaths());
  std::vector<std::string> created_dirs;  // in creation order, parents first
  std::vector<std::string> temps;
  size_t renamed = 0;
  auto undo = [&] {
    for (size_t i = 0; i < temps.size(); ++i) {
      if (temps[i].empty()) continue;  // written in place
      std::remove(i < renamed ? files_[i].path.c_str() : temps[i].c_str());
    }
    for (auto it = created_dirs.rbegin(); it != created_dirs.rend(); ++it) rmdir(it->c_str());
  };
  for (const Directory& d : directories_) {
    std::string partial;
    for (size_t i = 0; i <= d.path.size(); ++i) {
      if ((i == d.path.size() || d.path[i] == '/') && !partial.empty() &&
          KindOf(partial) == Kind::kMissing) {
        if (mkdir(partial.c_str(), 0755) != 0) {
          const int saved = errno;
          undo();
          return planner::Fail(Name(d.path, d.flag) + ": cannot create directory " + partial +
                               ": " + std::strerror(saved));
        }
        created_dirs.push_back(partial);
      }
      if (i < d.path.size()) partial += d.path[i];
    }
    if (KindOf(d.path) != Kind::kDirectory) {
      undo();
      return planner::Fail(Name(d.path, d.flag) + ": not a directory");
    }
  }
  // Devices and pipes cannot be replaced by a rename (and must not be: -o
  // /dev/null as root would replace the device); they are written in place
  // after every regular file's temporary, so a failure still leaves nothing.
  std::vector<bool> special(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) {
    special[i] = KindOf(files_[i].path) == Kind::kSpecial;
    temps.push_back(special[i] ? std::string() : TempName(files_[i].path));
    if (special[i]) continue;
    planner::Check written = WriteWhole(temps[i], files_[i].contents, Name(files_[i].path, files_[i].flag));
    if (!written.ok()) {
      undo();
      return written;
    }
  }
  for (size_t i = 0; i < files_.size(); ++i) {
    if (!special[i]) continue;
    planner::Check written = WriteWhole(files_[i].path, files_[i].contents, Name(files_[i].path, files_[i].flag));
    if (!written.ok()) {
      undo();
      return written;
    }
  }
  for (; renamed < files_.size(); ++renamed) {
    if (special[renamed]) continue;
    if (std::rename(temps[renamed].c_str(), files_[renamed].path.c_str()) != 0) {
      const int saved = errno;
      undo();
      return planner::Fail(Name(files_[renamed].path, files_[renamed].flag) +
                           ": cannot rename the temporary file into place: " +
                           std::strerror(saved));
    }
  }
  return {};
}

}  // namespace baton::tool
