#pragma once
// Writes several output files all-or-nothing: every file goes to a
// temporary name first; only when all were written are they renamed into
// place. On any failure the temporaries are removed and nothing is left.

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "baton/planner/result.h"

namespace baton::tool {

class OutputFiles {
 public:
  void Add(const std::string& path, std::string contents) {
    files_.emplace_back(path, std::move(contents));
  }

  planner::Check Commit() {
    std::vector<std::string> temps;
    auto cleanup = [&] {
      for (const std::string& t : temps) std::remove(t.c_str());
    };
    for (const auto& [path, contents] : files_) {
      std::string tmp = path + ".tmp";
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) {
        cleanup();
        return planner::Fail(path + ": cannot open for writing");
      }
      temps.push_back(tmp);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
      out.close();
      if (!out) {
        cleanup();
        return planner::Fail(path + ": write error");
      }
    }
    for (size_t i = 0; i < files_.size(); ++i) {
      if (std::rename(temps[i].c_str(), files_[i].first.c_str()) != 0) {
        cleanup();
        return planner::Fail(files_[i].first + ": cannot rename into place");
      }
    }
    return {};
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace baton::tool
