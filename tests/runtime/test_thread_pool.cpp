#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <mutex>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#include "core/runtime/thread_pool.h"

using namespace fusebox;

// Every index is visited exactly once, over many back-to-back jobs of varying sizes.
TEST(ThreadPool, CoversEveryIndexOnceAcrossManyJobs) {
  ThreadPool pool(4);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4097}) {
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallelFor(n, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
    }
  }
  pool.parallelFor(0, [](int64_t, int64_t) { FAIL() << "an empty range runs nothing"; });
  EXPECT_EQ(pool.size(), 4u);
}

// A worker that wakes late must not take chunks of the next job with the previous job's body.
// The bodies outlive their jobs here, so such a stale call would show up as a double count in an
// old job and a missing index in the new one.
TEST(ThreadPool, NoChunkOfAJobRunsWithAnotherJobsBody) {
  ThreadPool pool(4);
  const int jobs = 2000;
  const int64_t n = 3;
  std::vector<std::vector<std::atomic<int>>> hits(jobs);
  std::vector<std::function<void(int64_t, int64_t)>> bodies;
  for (int j = 0; j < jobs; ++j) {
    hits[j] = std::vector<std::atomic<int>>(n);
    bodies.push_back([&hits, j](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[j][static_cast<size_t>(i)].fetch_add(1);
    });
  }
  for (int j = 0; j < jobs; ++j) pool.parallelFor(n, bodies[j]);
  for (int j = 0; j < jobs; ++j)
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[j][static_cast<size_t>(i)].load(), 1) << "job " << j << " index " << i;
}

// Thread i of T owns rows [i n / T, (i + 1) n / T): a chunk never straddles two ranges, the
// owner takes its range from the front and the others take what is left of it from the end, so
// within a range every chunk the owner ran comes before every chunk another thread took (checked
// on range 0, whose owner is the caller). Random sleeps make threads late and steal.
TEST(ThreadPool, ThreadsRunTheirOwnRangeFromTheFrontAndStealFromTheEnd) {
  const int threads = 4;
  ThreadPool pool(threads);
  unsigned seed = 1;
  for (int64_t n : {3, 5, 97, 1000}) {
    for (int rep = 0; rep < 20; ++rep) {
      struct Chunk {
        int64_t begin, end;
        std::thread::id thread;
      };
      std::mutex m;
      std::vector<Chunk> chunks;
      std::vector<int> delays;
      for (int64_t i = 0; i < n; ++i) delays.push_back(static_cast<int>((seed = seed * 1103515245u + 12345u) >> 16) % 50);
      pool.parallelFor(n, [&](int64_t b, int64_t e) {
        std::this_thread::sleep_for(std::chrono::microseconds(delays[static_cast<size_t>(b)]));
        std::lock_guard<std::mutex> lock(m);
        chunks.push_back({b, e, std::this_thread::get_id()});
      });
      std::sort(chunks.begin(), chunks.end(), [](const Chunk& x, const Chunk& y) { return x.begin < y.begin; });
      ASSERT_FALSE(chunks.empty());
      EXPECT_EQ(chunks.front().begin, 0);
      EXPECT_EQ(chunks.back().end, n);
      for (int t = 0; t < threads; ++t) {
        int64_t lo = t * n / threads, hi = (t + 1) * n / threads;
        for (const Chunk& c : chunks)
          if (c.begin < hi && c.end > lo)
            EXPECT_TRUE(c.begin >= lo && c.end <= hi) << "n=" << n << ": chunk [" << c.begin << ", " << c.end << ") straddles range " << t;
      }
      // Range 0's owner is the calling thread: its chunks there are a prefix of the range.
      bool thieves = false;
      for (const Chunk& c : chunks) {
        if (c.begin >= n / threads) break;
        if (c.thread != std::this_thread::get_id()) thieves = true;
        else EXPECT_FALSE(thieves) << "n=" << n << ": the caller ran a chunk of its range after a thief's";
      }
    }
  }
}

#ifdef __linux__
namespace {
int allowedCpuCount() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}
}  // namespace

// Each thread of a pool runs on a CPU of its own while the pool lives (unpinned, the worker was
// woken onto the caller's CPU and the two took turns), and the caller gets its affinity back.
TEST(ThreadPool, PinsEachThreadToItsOwnCpuAndRestoresTheCaller) {
  int before = allowedCpuCount();
  if (before < 2) GTEST_SKIP() << "fewer than 2 CPUs allowed";
  {
    ThreadPool pool(2);
    std::mutex m;
    std::map<std::thread::id, std::vector<int>> cpus;
    for (int job = 0; job < 20; ++job)
      pool.parallelFor(64, [&](int64_t, int64_t) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // long enough for the worker to join in
        std::lock_guard<std::mutex> lock(m);
        cpus[std::this_thread::get_id()].push_back(sched_getcpu());
      });
    ASSERT_EQ(cpus.size(), 2u) << "both threads ran chunks";
    std::vector<int> seen;
    for (auto& [thread, list] : cpus) {
      EXPECT_TRUE(std::all_of(list.begin(), list.end(), [&](int c) { return c == list.front(); })) << "a thread moved";
      seen.push_back(list.front());
    }
    EXPECT_NE(seen[0], seen[1]);
    EXPECT_EQ(allowedCpuCount(), 1) << "the caller is pinned while the pool lives";
  }
  EXPECT_EQ(allowedCpuCount(), before);
}
#endif
