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

// Guided claims: each chunk is a share of what was left, so chunks shrink from the first to the
// last (ordered by where they start), whichever thread claimed them, and the last is one row.
TEST(ThreadPool, ChunksShrinkTowardTheEnd) {
  ThreadPool pool(2);
  for (int64_t n : {5, 97, 1000}) {
    std::mutex m;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    pool.parallelFor(n, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(m);
      chunks.emplace_back(b, e);
    });
    std::sort(chunks.begin(), chunks.end());
    ASSERT_FALSE(chunks.empty());
    EXPECT_LE(chunks.front().second - chunks.front().first, std::max<int64_t>(1, n / 4)) << "n=" << n;
    for (size_t i = 1; i < chunks.size(); ++i) {
      EXPECT_EQ(chunks[i].first, chunks[i - 1].second) << "n=" << n;
      EXPECT_LE(chunks[i].second - chunks[i].first, chunks[i - 1].second - chunks[i - 1].first) << "n=" << n;
    }
    EXPECT_EQ(chunks.back().second, n);
    EXPECT_EQ(chunks.back().second - chunks.back().first, 1) << "n=" << n;
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
