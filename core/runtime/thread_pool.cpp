#include "core/runtime/thread_pool.h"

#include <algorithm>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace fusebox {

namespace {
// next_ holds the job's generation (high 32 bits) and its next chunk (low 32 bits): a worker that
// woke for an earlier job fails to claim anything of a later one.
constexpr uint64_t kChunkBits = 32;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
constexpr int kSpinsBeforeSleep = 20000;  // pause instructions: ~0.1-0.5 ms

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The CPUs the calling thread may run on (empty where the platform does not say).
std::vector<int> allowedCpus() {
  std::vector<int> cpus;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
  return cpus;
}

// Restricts the calling thread to `cpus` (a hint: failure leaves it as it was).
void runOn(const std::vector<int>& cpus) {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
  (void)cpus;
#endif
}
}  // namespace

ThreadPool::ThreadPool(unsigned threads) : caller_(std::this_thread::get_id()) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<int> allowed = allowedCpus();
  if (threads > 1 && allowed.size() >= threads) {
    cpus_.assign(allowed.begin(), allowed.begin() + threads);
    callerCpus_ = allowed;
    runOn({cpus_[0]});
  }
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this, i] {
      if (!cpus_.empty()) runOn({cpus_[i]});
      work();
    });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (!cpus_.empty() && std::this_thread::get_id() == caller_) runOn(callerCpus_);
}

// Claims and runs chunks of job `generation` until none is left or another job has started.
// Guided: each claim takes a share of what is left (units left / (2 x threads), at least one unit),
// so a worker that wakes late still finds work, and the last chunks are small enough that neither
// thread waits long for the other. Finished units are counted; the caller waits for the count, not
// for the workers, so a worker still asleep when the caller has done everything costs nothing.
void ThreadPool::runChunks(uint32_t generation, const std::function<void(int64_t, int64_t)>* body, int64_t n,
                           int64_t chunk, int64_t chunks) {
  const int64_t share = 2 * static_cast<int64_t>(size());
  uint64_t v = next_.load();
  for (;;) {
    if ((v >> kChunkBits) != generation) return;
    int64_t first = static_cast<int64_t>(v & kChunkMask), left = chunks - first;
    if (left <= 0) return;
    int64_t take = std::max<int64_t>(1, left / share);
    if (!next_.compare_exchange_weak(v, v + static_cast<uint64_t>(take))) continue;
    (*body)(first * chunk, std::min(n, (first + take) * chunk));
    if (finished_.fetch_add(take) + take == chunks) finished_.notify_all();
    v = next_.load();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* body;
    int64_t n, chunk, chunks;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      body = body_, n = n_, chunk = chunk_, chunks = chunks_;
    }
    runChunks(static_cast<uint32_t>(seen), body, n, chunk, chunks);
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    body(0, n);
    return;
  }
  int64_t chunk = std::max<int64_t>(1, n >> 30);  // the unit claims count in: fewer than 2^31 of them
  int64_t chunks = (n + chunk - 1) / chunk;
  uint32_t generation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    chunk_ = chunk;
    chunks_ = chunks;
    generation = static_cast<uint32_t>(++generation_);
    finished_.store(0);
    next_.store(static_cast<uint64_t>(generation) << kChunkBits);
  }
  wake_.notify_all();
  runChunks(generation, &body, n, chunk, chunks);
  // Only chunks a worker claimed can still be running; once all are counted, no worker touches
  // this job again (its claims fail on the generation). Those end close together (guided chunks):
  // spin for them rather than sleep, since a sleeping vCPU takes tens of microseconds to wake
  // (measured: 2x128x28x28 3x3 convolution, 2 threads, 0.79 -> 0.64 ms). The workers still sleep
  // between jobs (passive waiting); onnxruntime's caller spins the same way at a section's end.
  for (int spin = 0; spin < kSpinsBeforeSleep && finished_.load(std::memory_order_acquire) != chunks; ++spin)
    cpuRelax();
  for (int64_t done = finished_.load(); done != chunks; done = finished_.load()) finished_.wait(done);
}

}  // namespace fusebox
