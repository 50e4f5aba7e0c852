#include "baton/planner/program.h"

namespace baton::planner {

uint32_t Program::QueueThreads(int q) const {
  if (q < 0 || static_cast<size_t>(q) >= queues.size()) return 1;
  const QueueInfo& info = queues[static_cast<size_t>(q)];
  if (info.device < 0 || info.kind != schema::DeviceKind::Cpu) return 1;
  return target.devices[static_cast<size_t>(info.device)].threads;
}

uint32_t Program::NodeThreads(int n) const {
  const int q = node_queue[static_cast<size_t>(n)];
  const uint32_t threads = QueueThreads(q);
  if (threads <= 1) return 1;
  const QueueInfo& info = queues[static_cast<size_t>(q)];
  return target.devices[static_cast<size_t>(info.device)].ThreadsFor(graph.nodes[n].op);
}

int Program::QueueOfDevice(int device) const { return device; }

int Program::NumCopies() const {
  int copies = 0;
  for (const Node& n : graph.nodes) copies += n.op == kCopyOp ? 1 : 0;
  return copies;
}

}  // namespace baton::planner
