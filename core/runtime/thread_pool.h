// A small persistent thread pool for the generated kernels' row loops (no OpenMP).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fusebox {

class ThreadPool {
public:
  explicit ThreadPool(unsigned threads = 0);  // 0: one per hardware thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls body(begin, end) over disjoint chunks covering [0, n); returns when all are done.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body);
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

private:
  void work();
  void runChunks(uint32_t generation, const std::function<void(int64_t, int64_t)>* body, int64_t n, int64_t chunk,
                 int64_t chunks);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t n_ = 0, chunk_ = 1, chunks_ = 0;  // rows, rows per unit, units
  std::atomic<uint64_t> next_{0};       // the job's generation, then its first unclaimed unit (chunk_ rows)
  std::atomic<int64_t> finished_{0};    // units of the current job done
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace fusebox
