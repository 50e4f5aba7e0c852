#include "test_util.h"

#include <gtest/gtest.h>

namespace baton::testing {

std::vector<std::vector<float>> RunStream(const AlignedPlan& plan, Mode mode,
                                          const std::vector<std::vector<float>>& inputs) {
  std::vector<std::vector<float>> results;
  PlanView view;
  LoadError error;
  Status s = PlanView::Load(plan.data(), plan.size(), &view, &error);
  EXPECT_TRUE(s.ok()) << error.text;
  if (!s.ok()) return results;

  linux_port::Arenas arenas(view);
  linux_port::LinuxPort* linux_port = nullptr;
  AsyncPort* async = nullptr;
  InlinePort inline_port;
  Port* port = &inline_port;
  if (mode == Mode::kAsync) {
    async = new AsyncPort(view, 3);
    port = async;
  } else if (mode == Mode::kLinuxCooperative || mode == Mode::kLinuxThreaded) {
    linux_port::Options options;
    options.threaded = mode == Mode::kLinuxThreaded;
    linux_port = new linux_port::LinuxPort(view, arenas.buffers(), options);
    port = linux_port;
  }
  // Port has a protected destructor: delete through the concrete types.
  struct Cleanup {
    AsyncPort* a;
    linux_port::LinuxPort* l;
    ~Cleanup() {
      delete a;
      delete l;
    }
  } cleanup{async, linux_port};

  Executor executor;
  s = executor.Init(view, ReferenceRegistry(), port, arenas.buffers(), &error);
  EXPECT_TRUE(s.ok()) << error.text;
  if (!s.ok()) return results;
  if (linux_port != nullptr) {
    s = linux_port->Start(&executor);
    EXPECT_TRUE(s.ok()) << s.message();
  }

  const size_t out_count = view.output(0)->bytes() / sizeof(float);
  size_t next = 0;
  while (results.size() < inputs.size()) {
    // Submit while the executor accepts more.
    while (next < inputs.size()) {
      const std::vector<float>& in = inputs[next];
      s = executor.SetInput(0, in.data(), in.size() * sizeof(float));
      if (s.code() == StatusCode::kBusy) break;
      EXPECT_TRUE(s.ok()) << s.message();
      if (!s.ok()) return results;
      s = executor.Run();
      EXPECT_TRUE(s.ok()) << s.message();
      ++next;
    }
    if (next == inputs.size()) executor.Flush();
    s = executor.Wait();
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) break;
    std::vector<float> out(out_count);
    Buffer buffer{out.data(), out.size() * sizeof(float)};
    s = executor.GetOutputs(Span<const Buffer>(&buffer, 1));
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) break;
    results.push_back(out);
  }
  if (linux_port != nullptr) linux_port->Stop();
  return results;
}

}  // namespace baton::testing
