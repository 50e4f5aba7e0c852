#include "baton/planner/memory/sharing.h"

#include <numeric>

namespace baton::planner {

bool SharingRule::Before(int x, int y, int delta) const {
  const bool x_caller = x < 0, y_caller = y < 0;
  if (!x_caller && !y_caller) return hb_.Completed(x, -delta, y);
  if (x == kCallerWrite) return delta >= (y == kCallerWrite ? 1 : 0);
  if (x == kCallerRead) return y == kCallerRead ? delta >= 1 : delta >= in_flight_;
  // x is a node.
  return y == kCallerRead ? delta >= 0 : delta >= in_flight_;
}

bool SharingRule::AllBefore(const std::vector<int>& a, const std::vector<int>& b, int delta) const {
  for (int x : a) {
    for (int y : b) {
      if (!Before(x, y, delta)) return false;
    }
  }
  return true;
}

bool SharingRule::Ordered(const std::vector<int>& t, const std::vector<int>& u, int delta) const {
  return AllBefore(t, u, delta) || AllBefore(u, t, -delta);
}

bool SharingRule::SingleSlotMayShare(const std::vector<int>& t, const std::vector<int>& u) const {
  return (AllBefore(t, u, 0) && AllBefore(u, t, 1)) || (AllBefore(u, t, 0) && AllBefore(t, u, 1));
}

bool SharingRule::SlotsMayShare(const std::vector<int>& t, int t_slots, int s,
                                const std::vector<int>& u, int u_slots, int r) const {
  const int g = std::gcd(t_slots, u_slots);
  const int residue = ((r - s) % g + g) % g;
  // delta = 0 first: the likeliest to interleave.
  for (int step = 0; step < 2 * in_flight_ - 1; ++step) {
    const int delta = step % 2 == 0 ? step / 2 : -(step + 1) / 2;
    if (((delta % g) + g) % g != residue) continue;
    if (!Ordered(t, u, delta)) return false;
  }
  return true;
}

bool SharingRule::AnySlotsMayShare(const std::vector<int>& t, const std::vector<int>& u) const {
  return SlotsMayShare(t, 1, 0, u, 1, 0);
}

bool SharingRule::LanesMayShare(const std::vector<int>& t, const std::vector<int>& u,
                                int slots) const {
  return SlotsMayShare(t, slots, 0, u, slots, 0);
}

}  // namespace baton::planner
