// Splits a packing problem into independent components and builds, for each,
// the conflict graph the packer's engines work on. See pack_internal.h.

#include <algorithm>
#include <numeric>
#include <utility>

#include "pack_internal.h"

namespace baton::planner::pack_detail {

int64_t Component::HeightBytes(const std::vector<int64_t>& offsets) const {
  int64_t height = 0;
  for (int i = 0; i < n; ++i) {
    height = std::max(height, offsets[i] * alignment + bytes[i]);
  }
  return height;
}

std::vector<int64_t> Component::UnitCaps(int64_t target_bytes) const {
  // o * A + b <= T  <=>  o <= floor((T - b) / A), as o is a whole unit count.
  std::vector<int64_t> caps(n);
  for (int i = 0; i < n; ++i) {
    caps[i] = target_bytes < bytes[i] ? -1 : (target_bytes - bytes[i]) / alignment + size[i];
  }
  return caps;
}

namespace {

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

// Largest total of `bytes` live at one instant; ends sort before starts at the
// same time because lifetimes are half-open.
int64_t PeakLive(const Component& c) {
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * c.n);
  for (int i = 0; i < c.n; ++i) {
    events.emplace_back(c.lower[i], c.bytes[i]);
    events.emplace_back(c.upper[i], -c.bytes[i]);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto& e : events) {
    live += e.second;
    peak = std::max(peak, live);
  }
  return peak;
}

// Builds both CSR graphs. Local indices are sorted by lower, so the interval
// neighbours of i that start no earlier than i are i+1 .. end(i)-1.
void BuildGraphs(Component& c, const std::vector<std::pair<int, int>>& extra_pairs) {
  const int n = c.n;
  auto make_csr = [n](std::vector<std::vector<int>>& rows, std::vector<int>* begin,
                      std::vector<int>* flat) {
    begin->assign(n + 1, 0);
    for (int i = 0; i < n; ++i) {
      std::sort(rows[i].begin(), rows[i].end());
      rows[i].erase(std::unique(rows[i].begin(), rows[i].end()), rows[i].end());
      (*begin)[i + 1] = (*begin)[i] + static_cast<int>(rows[i].size());
    }
    flat->clear();
    flat->reserve((*begin)[n]);
    for (int i = 0; i < n; ++i) {
      flat->insert(flat->end(), rows[i].begin(), rows[i].end());
      std::vector<int>().swap(rows[i]);
    }
  };

  std::vector<std::vector<int>> extra_rows(n);
  for (const auto& [a, b] : extra_pairs) {
    if (c.Overlap(a, b)) continue;  // already a conflict
    extra_rows[a].push_back(b);
    extra_rows[b].push_back(a);
    c.interval_only = false;
  }

  std::vector<int> end(n);
  int64_t entries = 0;
  for (int i = 0; i < n; ++i) {
    end[i] = static_cast<int>(std::lower_bound(c.lower.begin(), c.lower.end(), c.upper[i]) -
                              c.lower.begin());
    entries += 2 * (end[i] - i - 1);
  }
  for (int i = 0; i < n; ++i) entries += static_cast<int64_t>(extra_rows[i].size());
  c.has_adjacency = entries <= kMaxAdjacencyEntries;
  if (c.has_adjacency) {
    std::vector<std::vector<int>> rows(n);
    for (int i = 0; i < n; ++i) {
      rows[i].reserve(extra_rows[i].size());
      for (int j = i + 1; j < end[i]; ++j) {
        rows[i].push_back(j);
        rows[j].push_back(i);
      }
      rows[i].insert(rows[i].end(), extra_rows[i].begin(), extra_rows[i].end());
    }
    make_csr(rows, &c.adj_begin, &c.adj);
  }
  make_csr(extra_rows, &c.extra_begin, &c.extra);
}

}  // namespace

std::vector<Component> BuildComponents(const PackProblemView& view) {
  const auto& lower = *view.lower;
  const auto& upper = *view.upper;
  const int n = static_cast<int>(lower.size());
  std::vector<int> sorted(n);
  std::iota(sorted.begin(), sorted.end(), 0);
  std::sort(sorted.begin(), sorted.end(), [&](int a, int b) {
    if (lower[a] != lower[b]) return lower[a] < lower[b];
    if (upper[a] != upper[b]) return upper[a] < upper[b];
    return a < b;
  });

  // Interval components: a new one starts where nothing earlier is still live.
  std::vector<int> group(n);
  int groups = 0;
  int64_t reach = 0;
  for (int k = 0; k < n; ++k) {
    const int i = sorted[k];
    if (k == 0 || lower[i] >= reach) {
      ++groups;
      reach = upper[i];
    }
    reach = std::max(reach, upper[i]);
    group[i] = groups - 1;
  }
  // Extra conflicts join interval components.
  std::vector<int> parent(groups);
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& [a, b] : *view.extra_conflicts) {
    const int ra = Find(parent, group[a]), rb = Find(parent, group[b]);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<int> comp_of_root(groups, -1);
  std::vector<Component> comps;
  std::vector<int> local(n);
  for (int k = 0; k < n; ++k) {
    const int i = sorted[k];
    const int root = Find(parent, group[i]);
    if (comp_of_root[root] < 0) {
      comp_of_root[root] = static_cast<int>(comps.size());
      comps.emplace_back();
      comps.back().alignment = view.alignment;
    }
    Component& c = comps[comp_of_root[root]];
    local[i] = c.n++;
    c.ids.push_back(i);
    c.lower.push_back(lower[i]);
    c.upper.push_back(upper[i]);
    const int64_t b = (*view.bytes)[i];
    c.bytes.push_back(b);
    c.size.push_back((b + view.alignment - 1) / view.alignment);
  }
  // Merged components are no longer sorted by lower; restore that order.
  for (Component& c : comps) {
    if (std::is_sorted(c.lower.begin(), c.lower.end())) continue;
    std::vector<int> perm(c.n);
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int a, int b) { return c.lower[a] < c.lower[b]; });
    Component s;
    s.alignment = c.alignment;
    s.n = c.n;
    for (int k : perm) {
      local[c.ids[k]] = static_cast<int>(s.ids.size());
      s.ids.push_back(c.ids[k]);
      s.lower.push_back(c.lower[k]);
      s.upper.push_back(c.upper[k]);
      s.bytes.push_back(c.bytes[k]);
      s.size.push_back(c.size[k]);
    }
    c = std::move(s);
  }
  std::vector<std::vector<std::pair<int, int>>> extra(comps.size());
  for (const auto& [a, b] : *view.extra_conflicts) {
    extra[comp_of_root[Find(parent, group[a])]].emplace_back(local[a], local[b]);
  }
  for (size_t k = 0; k < comps.size(); ++k) {
    BuildGraphs(comps[k], extra[k]);
    comps[k].lower_bound_bytes = PeakLive(comps[k]);
  }
  return comps;
}

}  // namespace baton::planner::pack_detail
