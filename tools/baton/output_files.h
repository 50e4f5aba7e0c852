#pragma once
// All of a command's output files, written all or nothing (DESIGN §7 "nothing
// partial written", docs/cli.md "Outputs").
//
// Add every file (and any directory the files go into) first; Commit then
//   1. checks the set: no empty path, no two outputs naming the same file
//      (after resolving `.`, `..` and symbolic links), no file where an
//      existing directory is, no directory where an existing file is;
//   2. creates the missing directories;
//   3. writes every file to a temporary name in its own directory
//      (`<path>.tmp.<pid>`), checking every write and the close, so a full
//      disk is an error;
//   4. renames the temporaries into place only when all were written.
// An output that exists and is not a regular file (/dev/null, /dev/stdout, a
// FIFO) is written in place, after all temporaries were written and before
// any rename: a rename would replace the device node itself.
// On any failure it removes the temporaries, the files it already renamed
// and the directories it created, and returns an error naming the path.
// CheckPaths runs step 1 alone, so a command can refuse a bad set of paths
// before it does any work.

#include <string>
#include <vector>

#include "baton/planner/result.h"

namespace baton::tool {

class OutputFiles {
 public:
  // `flag` names the option the path came from in errors ("-o", "--header").
  void Add(const std::string& path, std::string contents, const std::string& flag = "");
  // A directory that must exist (created with its parents if missing).
  void AddDirectory(const std::string& path, const std::string& flag = "");

  planner::Check CheckPaths() const;
  planner::Check Commit();

 private:
  struct File {
    std::string path;
    std::string contents;
    std::string flag;
  };
  struct Directory {
    std::string path;
    std::string flag;
  };
  std::vector<File> files_;
  std::vector<Directory> directories_;
};

}  // namespace baton::tool
