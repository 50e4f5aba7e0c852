// Splits a packing problem into independent components and builds, for each,
// the conflict graph the packer's engines work on. See pack_internal.h.

#include <algorithm>
#include <numeric>
#include <set>
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

// Interval sections: for each distinct upper time t, the buffers live just
// before t (lower < t <= upper). Appends them in time order.
void IntervalSections(const Component& c, std::vector<std::vector<int>>* out) {
  std::vector<int64_t> times(c.upper.begin(), c.upper.end());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const size_t base = out->size();
  out->resize(base + times.size());
  for (int i = 0; i < c.n; ++i) {
    const size_t first = std::upper_bound(times.begin(), times.end(), c.lower[i]) - times.begin();
    const size_t last = std::lower_bound(times.begin(), times.end(), c.upper[i]) - times.begin();
    for (size_t s = first; s <= last; ++s) (*out)[base + s].push_back(i);
  }
}

// Greedy cliques of the conflict graph, one grown from each buffer (heaviest
// neighbours first), within a work budget; duplicates are dropped.
void GreedyCliques(const Component& c, std::vector<std::vector<int>>* out) {
  constexpr int64_t kWorkBudget = int64_t{1} << 25;
  int64_t work = 0;
  std::vector<int> seeds(c.n);
  std::iota(seeds.begin(), seeds.end(), 0);
  std::stable_sort(seeds.begin(), seeds.end(),
                   [&](int a, int b) { return c.bytes[a] > c.bytes[b]; });
  std::vector<int> adjacent(c.n, 0);  // members adjacent to each buffer
  std::vector<int> candidates, clique;
  std::set<std::vector<int>> seen;
  for (const auto& section : *out) seen.insert(section);
  for (int v : seeds) {
    if (work > kWorkBudget) break;
    candidates.assign(c.adj.begin() + c.adj_begin[v], c.adj.begin() + c.adj_begin[v + 1]);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](int a, int b) { return c.bytes[a] > c.bytes[b]; });
    clique.assign(1, v);
    auto join = [&](int w) {
      for (int k = c.adj_begin[w]; k < c.adj_begin[w + 1]; ++k) ++adjacent[c.adj[k]];
      work += c.adj_begin[w + 1] - c.adj_begin[w];
    };
    join(v);
    for (int u : candidates) {
      if (adjacent[u] == static_cast<int>(clique.size())) {
        clique.push_back(u);
        join(u);
      }
    }
    for (int w : clique) {
      for (int k = c.adj_begin[w]; k < c.adj_begin[w + 1]; ++k) --adjacent[c.adj[k]];
    }
    std::sort(clique.begin(), clique.end());
    if (clique.size() > 1 && seen.insert(clique).second) out->push_back(clique);
  }
}

void BuildSections(Component& c) {
  std::vector<std::vector<int>> sections;
  IntervalSections(c, &sections);
  if (!c.interval_only) {
    // Unit or disjoint intervals make single-buffer sections; the greedy
    // cliques carry the inference instead.
    sections.erase(std::remove_if(sections.begin(), sections.end(),
                                  [](const std::vector<int>& s) { return s.size() < 2; }),
                   sections.end());
    GreedyCliques(c, &sections);
  }
  c.sec_begin.assign(1, 0);
  c.sec_buf.clear();
  std::vector<int> count(c.n + 1, 0);
  for (const auto& section : sections) {
    c.sec_buf.insert(c.sec_buf.end(), section.begin(), section.end());
    c.sec_begin.push_back(static_cast<int>(c.sec_buf.size()));
    for (int i : section) ++count[i + 1];
  }
  c.mem_begin.assign(c.n + 1, 0);
  for (int i = 0; i < c.n; ++i) c.mem_begin[i + 1] = c.mem_begin[i] + count[i + 1];
  c.mem_sec.resize(c.mem_begin[c.n]);
  std::vector<int> fill(c.mem_begin.begin(), c.mem_begin.end() - 1);
  for (int s = 0; s < c.sections(); ++s) {
    int64_t bytes = 0;
    for (int k = c.sec_begin[s]; k < c.sec_begin[s + 1]; ++k) {
      const int i = c.sec_buf[k];
      c.mem_sec[fill[i]++] = s;
      bytes += c.bytes[i];
    }
    c.lower_bound_bytes = std::max(c.lower_bound_bytes, bytes);
  }
}

// Buffer indices sorted by (lower, upper, index).
std::vector<int> SortByLifetime(const std::vector<int64_t>& lower,
                                const std::vector<int64_t>& upper) {
  std::vector<int> sorted(lower.size());
  std::iota(sorted.begin(), sorted.end(), 0);
  std::sort(sorted.begin(), sorted.end(), [&](int a, int b) {
    if (lower[a] != lower[b]) return lower[a] < lower[b];
    if (upper[a] != upper[b]) return upper[a] < upper[b];
    return a < b;
  });
  return sorted;
}

// Each buffer's component, numbered in the order of `sorted`: a new interval
// component starts where nothing earlier is still live, and extra conflicts
// join the interval components they connect. Sets *out_count.
std::vector<int> ComponentOf(const PackProblemView& view, const std::vector<int>& sorted,
                             int* out_count) {
  const auto& lower = *view.lower;
  const auto& upper = *view.upper;
  const int n = static_cast<int>(sorted.size());
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
  std::vector<int> parent(groups);
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& [a, b] : *view.extra_conflicts) {
    const int ra = Find(parent, group[a]), rb = Find(parent, group[b]);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  // Components are numbered as their first buffer comes in `sorted`.
  std::vector<int> comp_of_root(groups, -1);
  std::vector<int> comp(n);
  *out_count = 0;
  for (int k = 0; k < n; ++k) {
    const int i = sorted[k];
    const int root = Find(parent, group[i]);
    if (comp_of_root[root] < 0) comp_of_root[root] = (*out_count)++;
    comp[i] = comp_of_root[root];
  }
  return comp;
}

// Merged components are no longer sorted by lower; restores that order and
// updates `local` (problem index -> index in its component).
void SortByLower(Component& c, std::vector<int>& local) {
  if (std::is_sorted(c.lower.begin(), c.lower.end())) return;
  std::vector<int> perm(c.n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return c.lower[a] < c.lower[b]; });
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

}  // namespace

std::vector<Component> BuildComponents(const PackProblemView& view) {
  const std::vector<int> sorted = SortByLifetime(*view.lower, *view.upper);
  int count = 0;
  const std::vector<int> comp_of = ComponentOf(view, sorted, &count);
  std::vector<Component> comps(count);
  std::vector<int> local(sorted.size());
  for (int i : sorted) {
    Component& c = comps[comp_of[i]];
    c.alignment = view.alignment;
    local[i] = c.n++;
    c.ids.push_back(i);
    c.lower.push_back((*view.lower)[i]);
    c.upper.push_back((*view.upper)[i]);
    const int64_t b = (*view.bytes)[i];
    c.bytes.push_back(b);
    c.size.push_back((b + view.alignment - 1) / view.alignment);
  }
  for (Component& c : comps) SortByLower(c, local);
  std::vector<std::vector<std::pair<int, int>>> extra(comps.size());
  for (const auto& [a, b] : *view.extra_conflicts) {
    extra[comp_of[a]].emplace_back(local[a], local[b]);
  }
  for (size_t k = 0; k < comps.size(); ++k) {
    Component& c = comps[k];
    BuildGraphs(c, extra[k]);
    c.lower_bound_bytes = PeakLive(c);
    if (c.has_adjacency && c.n <= kMaxExactBuffers) BuildSections(c);
  }
  return comps;
}

}  // namespace baton::planner::pack_detail
