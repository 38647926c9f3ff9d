#include "core/autograd/max_flow.h"

#include <algorithm>
#include <queue>

namespace fusebox {

void MaxFlow::addEdge(int from, int to, int64_t capacity) {
  adj_[from].push_back(Edge{to, capacity, adj_[to].size()});
  adj_[to].push_back(Edge{from, 0, adj_[from].size() - 1});
}

bool MaxFlow::buildLevels(int source, int sink) {
  std::fill(level_.begin(), level_.end(), -1);
  std::queue<int> q;
  level_[source] = 0;
  q.push(source);
  while (!q.empty()) {
    int v = q.front();
    q.pop();
    for (const Edge& e : adj_[v])
      if (e.capacity > 0 && level_[e.to] < 0) {
        level_[e.to] = level_[v] + 1;
        q.push(e.to);
      }
  }
  return level_[sink] >= 0;
}

int64_t MaxFlow::push(int v, int sink, int64_t limit) {
  if (v == sink) return limit;
  for (size_t& i = next_[v]; i < adj_[v].size(); ++i) {
    Edge& e = adj_[v][i];
    if (e.capacity <= 0 || level_[e.to] != level_[v] + 1) continue;
    int64_t f = push(e.to, sink, std::min(limit, e.capacity));
    if (f > 0) {
      e.capacity -= f;
      adj_[e.to][e.reverse].capacity += f;
      return f;
    }
  }
  return 0;
}

int64_t MaxFlow::run(int source, int sink) {
  int64_t total = 0;
  while (buildLevels(source, sink)) {
    std::fill(next_.begin(), next_.end(), 0);
    while (int64_t f = push(source, sink, kInfinite)) {
      total += f;
      if (total >= kInfinite) return kInfinite;
    }
  }
  return total;
}

std::vector<bool> MaxFlow::sourceSide(int source) const {
  std::vector<bool> seen(adj_.size(), false);
  std::vector<int> stack{source};
  seen[source] = true;
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    for (const Edge& e : adj_[v])
      if (e.capacity > 0 && !seen[e.to]) {
        seen[e.to] = true;
        stack.push_back(e.to);
      }
  }
  return seen;
}

}  // namespace fusebox
