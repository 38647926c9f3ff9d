#include "core/runtime/thread_pool.h"

#include <algorithm>

namespace fusebox {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

// The job is passed by value, read under the lock: a late worker never reads fields the caller
// is rewriting for the next job.
void ThreadPool::runChunks(const std::function<void(int64_t, int64_t)>* body, int64_t n, int64_t chunk) {
  for (;;) {
    int64_t begin = next_.fetch_add(chunk);
    if (begin >= n) break;
    (*body)(begin, std::min(n, begin + chunk));
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* body;
    int64_t n, chunk;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      body = body_, n = n_, chunk = chunk_;
    }
    runChunks(body, n, chunk);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (++finished_ == workers_.size()) done_.notify_all();
    }
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    body(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    chunk_ = std::max<int64_t>(1, n / (static_cast<int64_t>(size()) * 4));
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  runChunks(&body, n, chunk_);
  std::unique_lock<std::mutex> lock(mutex_);
  // Every worker must have finished this job before the next one reuses next_: a worker that
  // woke late would otherwise take chunks of the next job with this job's body.
  done_.wait(lock, [&] { return finished_ == workers_.size(); });
}

}  // namespace fusebox
