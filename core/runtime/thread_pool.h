// A small persistent thread pool for the generated kernels' row loops (no OpenMP).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fusebox {

// Each thread of a pool (the constructing thread included) is pinned to its own CPU of the
// process's allowed set while the pool lives, where there are enough of them; the constructing
// thread's own affinity is restored when the pool ends. Left alone, Linux woke the worker on the
// caller's CPU and the two took turns on it: on a 2-vCPU machine a 2-thread depthwise convolution
// took as long as 1 thread (0.22 ms), 0.11 ms pinned.
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads = 0);  // 0: one per hardware thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls body(begin, end) over disjoint chunks covering [0, n); returns when all are done. Thread
  // i of T owns [i n / T, (i + 1) n / T) and runs it unless it is late: then the others take
  // pieces from its end.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body);
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

private:
  void work(unsigned self);
  void runChunks(uint64_t generation, unsigned self, const std::function<void(int64_t, int64_t)>* body, int64_t n,
                 int64_t chunk, int64_t chunks);

  // A thread's range of the current job, in one word so that one compare-exchange claims a piece:
  // the job's generation (its low 20 bits), the first and the end of its unclaimed units.
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };

  std::vector<std::thread> workers_;
  std::vector<int> cpus_;            // CPU of thread i (0: the constructing thread); empty: not pinned
  std::vector<int> callerCpus_;      // the constructing thread's allowed CPUs before it was pinned
  std::thread::id caller_;
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t n_ = 0, chunk_ = 1, chunks_ = 0;  // rows, rows per unit, units
  std::unique_ptr<Range[]> ranges_;     // per thread (0: the constructing thread)
  std::atomic<int64_t> finished_{0};    // units of the current job done
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace fusebox
