#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <functional>
#include <vector>

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
