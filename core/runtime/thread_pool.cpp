#include "core/runtime/thread_pool.h"

#include <algorithm>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace fusebox {

namespace {
// A Range word: generation (high 20 bits), first unclaimed unit, end of the unclaimed units (22
// bits each). A worker that woke for an earlier job fails to claim anything of a later one; a job
// has at most 2^22 - 1 units of rows.
constexpr int kUnitBits = 22;
constexpr uint64_t kUnitMask = (uint64_t{1} << kUnitBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - 2 * kUnitBits)) - 1;

inline uint64_t rangeWord(uint64_t generation, int64_t first, int64_t end) {
  return (generation & kGenerationMask) << (2 * kUnitBits) | static_cast<uint64_t>(first) << kUnitBits | static_cast<uint64_t>(end);
}
inline uint64_t wordGeneration(uint64_t w) { return w >> (2 * kUnitBits); }
inline int64_t wordFirst(uint64_t w) { return static_cast<int64_t>((w >> kUnitBits) & kUnitMask); }
inline int64_t wordEnd(uint64_t w) { return static_cast<int64_t>(w & kUnitMask); }
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
  ranges_.reset(new Range[threads]);
  std::vector<int> allowed = allowedCpus();
  if (threads > 1 && allowed.size() >= threads) {
    cpus_.assign(allowed.begin(), allowed.begin() + threads);
    callerCpus_ = allowed;
    runOn({cpus_[0]});
  }
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this, i] {
      if (!cpus_.empty()) runOn({cpus_[i]});
      work(i);
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

// Runs thread `self`'s range of job `generation` from its front, then takes pieces from the end of
// the others' ranges until none is left or another job has started. Owned ranges keep a thread on
// the same rows from kernel to kernel, so the channels a kernel writes on one core are read by the
// next on that core, out of its own L2 (under one shared cursor mobilenet_v2's depthwise
// convolutions read their input from the other core half the time). The caller, never late, claims
// its range in one piece (a kernel's call sets up its scratch); a worker, which may wake tens of
// microseconds late, claims half of what is left of its own at a time, and a thief a 1 / (2 x
// threads) share of another's, so neither thread waits long for the other at the end. Finished
// units are counted; the caller waits for the count, not for the workers, so a worker still asleep
// when the others have done everything costs nothing.
void ThreadPool::runChunks(uint64_t generation, unsigned self, const std::function<void(int64_t, int64_t)>* body,
                           int64_t n, int64_t chunk, int64_t chunks) {
  const unsigned threads = size();
  const int64_t share = 2 * static_cast<int64_t>(threads);
  for (unsigned k = 0; k < threads; ++k) {
    const bool own = k == 0;
    std::atomic<uint64_t>& word = ranges_[(self + k) % threads].word;
    uint64_t w = word.load();
    for (;;) {
      if (wordGeneration(w) != (generation & kGenerationMask)) return;
      int64_t first = wordFirst(w), end = wordEnd(w), left = end - first;
      if (left <= 0) break;
      int64_t take = own && self == 0 ? left : std::max<int64_t>(1, left / (own ? 2 : share));
      int64_t begin = own ? first : end - take;
      if (!word.compare_exchange_weak(w, own ? rangeWord(generation, first + take, end) : rangeWord(generation, first, end - take)))
        continue;
      (*body)(begin * chunk, std::min(n, (begin + take) * chunk));
      if (finished_.fetch_add(take) + take == chunks) finished_.notify_all();
      w = word.load();
    }
  }
}

void ThreadPool::work(unsigned self) {
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
    runChunks(seen, self, body, n, chunk, chunks);
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    body(0, n);
    return;
  }
  int64_t chunk = n / static_cast<int64_t>(kUnitMask) + 1;  // rows a unit: at most kUnitMask units
  int64_t chunks = (n + chunk - 1) / chunk;
  const int64_t threads = size();
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    chunk_ = chunk;
    chunks_ = chunks;
    generation = ++generation_;
    finished_.store(0);
    for (int64_t i = 0; i < threads; ++i) ranges_[i].word.store(rangeWord(generation, i * chunks / threads, (i + 1) * chunks / threads));
  }
  wake_.notify_all();
  runChunks(generation, 0, &body, n, chunk, chunks);
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
