// Regions over fusible edges, cut where a path leaves one and returns (see fusible_regions.h).
#include "core/segment/fusible_regions.h"

#include <algorithm>
#include <utility>

namespace fuserc {
namespace {

// Union-find over ops with path halving.
struct Components {
  std::vector<int> parent;
  explicit Components(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i) parent[i] = static_cast<int>(i);
  }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

// Per node of a directed graph: whether it lies on a cycle (its strongly connected component
// has more than one node; the graph has no self-loops). Tarjan's algorithm, iterative.
std::vector<bool> on_cycle(const std::vector<std::vector<int>>& adj) {
  const int n = static_cast<int>(adj.size());
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<bool> on_stack(n, false), cyclic(n, false);
  std::vector<std::pair<int, size_t>> calls;  // (node, next edge)
  int counter = 0;
  auto open = [&](int v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = true;
    calls.emplace_back(v, 0);
  };
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    open(root);
    while (!calls.empty()) {
      const int u = calls.back().first;
      if (calls.back().second < adj[u].size()) {
        const int w = adj[u][calls.back().second++];
        if (index[w] < 0)
          open(w);
        else if (on_stack[w])
          low[u] = std::min(low[u], index[w]);
        continue;
      }
      if (low[u] == index[u]) {
        std::vector<int> component;
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component.push_back(w);
        } while (w != u);
        if (component.size() > 1)
          for (int c : component) cyclic[c] = true;
      }
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[u]);
    }
  }
  return cyclic;
}

}  // namespace

bool fusible_edge(const Fusion& f, int producer, int consumer) {
  return f.ops[producer].kind != OpKind::SegmentSet &&
         f.ops[producer].info().group != OpGroup::Matrix &&
         f.ops[consumer].info().group != OpGroup::Matrix;
}

std::map<int, std::vector<std::vector<int>>> fusible_regions(
    const Fusion& f, const std::vector<std::set<int>>& producers) {
  const size_t n = f.ops.size();
  Components region(n);
  for (size_t k = 0; k < n; ++k)
    for (int p : producers[k])
      if (fusible_edge(f, p, static_cast<int>(k))) region.join(static_cast<int>(k), p);
  // The graph of regions, and the regions on a cycle of it.
  std::map<int, int> dense;  // region root -> node
  for (size_t k = 0; k < n; ++k) dense.emplace(region.find(static_cast<int>(k)), 0);
  int nodes = 0;
  for (auto& [root, node] : dense) node = nodes++;
  std::vector<std::vector<int>> adj(static_cast<size_t>(nodes));
  for (size_t k = 0; k < n; ++k) {
    const int to = dense[region.find(static_cast<int>(k))];
    for (int p : producers[k]) {
      const int from = dense[region.find(p)];
      if (from != to) adj[from].push_back(to);
    }
  }
  const std::vector<bool> cyclic = on_cycle(adj);
  bool any = false;
  for (bool c : cyclic) any = any || c;
  std::map<int, std::vector<std::vector<int>>> out;
  if (!any) {
    for (size_t k = 0; k < n; ++k) {
      auto& pieces = out[region.find(static_cast<int>(k))];
      if (pieces.empty()) pieces.emplace_back();
      pieces[0].push_back(static_cast<int>(k));
    }
    return out;
  }
  // Levels never fall along a path and rise past every edge no kernel may hold, so a region's
  // ops of one level are convex: a path that leaves them crosses such an edge or reaches a
  // higher level of the region, and cannot come back down.
  std::vector<int> level(n, 0);
  for (size_t k = 0; k < n; ++k)
    for (int p : producers[k])
      level[k] = std::max(level[k], level[p] + (fusible_edge(f, p, static_cast<int>(k)) ? 0 : 1));
  Components piece(n);
  for (size_t k = 0; k < n; ++k) {
    const int r = region.find(static_cast<int>(k));
    for (int p : producers[k])
      if (fusible_edge(f, p, static_cast<int>(k)) &&
          (!cyclic[dense[r]] || level[p] == level[k]))
        piece.join(static_cast<int>(k), p);
  }
  std::map<int, std::map<int, std::vector<int>>> pieces;  // region -> piece root -> ops
  for (size_t k = 0; k < n; ++k) {
    const int r = region.find(static_cast<int>(k));
    pieces[r][piece.find(static_cast<int>(k))].push_back(static_cast<int>(k));
  }
  for (auto& [r, by_root] : pieces)
    for (auto& [root, ops] : by_root) out[r].push_back(std::move(ops));
  return out;
}

}  // namespace fuserc
