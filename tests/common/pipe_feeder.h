#pragma once
// A pipe fed from a thread, for tests of readers that must take input
// without a size (ReadFile's and ReadAligned's streaming paths): Path()
// names the read end (/dev/fd/N), which the reader opens like a file.

#include <signal.h>
#include <unistd.h>

#include <cstddef>
#include <string>
#include <thread>

namespace baton::test {

class PipeFeeder {
 public:
  // Starts writing `bytes` (which must outlive Finish()). ok() is false when
  // the pipe could not be made; Path() is then empty.
  explicit PipeFeeder(const std::string& bytes) {
    if (pipe(fds_) != 0) return;
    ok_ = true;
    writer_ = std::thread([this, &bytes] {
      size_t at = 0;
      while (at < bytes.size()) {
        const ssize_t n = write(fds_[1], bytes.data() + at, bytes.size() - at);
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
      close(fds_[1]);
    });
  }
  ~PipeFeeder() { Finish(); }
  PipeFeeder(const PipeFeeder&) = delete;
  PipeFeeder& operator=(const PipeFeeder&) = delete;

  bool ok() const { return ok_; }
  std::string Path() const { return ok_ ? "/dev/fd/" + std::to_string(fds_[0]) : ""; }

  // Closes the read end first, so that a reader that stopped early fails its
  // checks instead of leaving the writer blocked (SIGPIPE ignored: the
  // writer's next write fails), then joins the writer.
  void Finish() {
    if (!ok_) return;
    ok_ = false;
    signal(SIGPIPE, SIG_IGN);
    close(fds_[0]);
    writer_.join();
  }

 private:
  int fds_[2] = {-1, -1};
  bool ok_ = false;
  std::thread writer_;
};

}  // namespace baton::test
