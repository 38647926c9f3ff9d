// Dinic's max-flow on a small directed graph, and the source side of the minimum cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusebox {

class MaxFlow {
public:
  static constexpr int64_t kInfinite = INT64_MAX / 4;

  explicit MaxFlow(int vertices) : adj_(vertices), level_(vertices), next_(vertices) {}
  void addEdge(int from, int to, int64_t capacity);
  int64_t run(int source, int sink);
  // After run(): the vertices reachable from the source in the residual graph.
  std::vector<bool> sourceSide(int source) const;

private:
  struct Edge {
    int to;
    int64_t capacity;
    size_t reverse;
  };
  bool buildLevels(int source, int sink);
  int64_t push(int v, int sink, int64_t limit);

  std::vector<std::vector<Edge>> adj_;
  std::vector<int> level_;
  std::vector<size_t> next_;
};

}  // namespace fusebox
