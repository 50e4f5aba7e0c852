#include "baton/planner/program.h"

namespace baton::planner {

int Program::QueueOfDevice(int device) const { return device; }

int Program::NumCopies() const {
  int copies = 0;
  for (const Node& n : graph.nodes) copies += n.op == kCopyOp ? 1 : 0;
  return copies;
}

}  // namespace baton::planner
