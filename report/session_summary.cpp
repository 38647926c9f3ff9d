#include "report/session_summary.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/ir/graph.h"

namespace fusebox {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<ProfileSample> latestRun(const SessionStore& store, int64_t session) {
  std::vector<ProfileSample> all = store.profile(session);
  int run = 0;
  for (const ProfileSample& s : all) run = std::max(run, s.run);
  std::vector<ProfileSample> out;
  for (const ProfileSample& s : all)
    if (s.run == run) out.push_back(s);
  return out;
}

}  // namespace

Spread spreadOf(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
  return {median(v), at(0.1), at(0.9)};
}

int warmupIterations(size_t iterations) { return iterations >= 3 ? 1 : 0; }

std::vector<KernelTiming> latestRunTimings(const SessionStore& store, int64_t session) {
  std::vector<KernelTiming> out;
  std::vector<ProfileSample> run = latestRun(store, session);
  std::set<int> iterations;
  for (const ProfileSample& s : run) iterations.insert(s.iteration);
  std::set<int> warmup(iterations.begin(), std::next(iterations.begin(), warmupIterations(iterations.size())));
  std::map<std::pair<std::string, std::string>, std::vector<double>> times, starts, launches;
  for (const ProfileSample& s : run) {
    auto key = std::make_pair(s.graph, s.kernel);
    if (!times.count(key)) {
      KernelTiming k;
      k.graph = s.graph;
      k.kernel = s.kernel;
      k.bytes = s.bytes;
      out.push_back(k);
      times[key];
    }
    if (warmup.count(s.iteration)) continue;
    times[key].push_back(s.ms);
    if (s.startMs >= 0) starts[key].push_back(s.startMs);
    if (s.launchMs >= 0) launches[key].push_back(s.launchMs);
  }
  std::map<std::pair<std::string, std::string>, std::vector<StoredKernelOp>> ops;
  for (StoredKernel& k : store.kernels(session)) ops[{k.graph, k.name}] = std::move(k.ops);
  for (KernelTiming& k : out) {
    if (auto o = ops.find({k.graph, k.kernel}); o != ops.end()) k.ops = o->second;
    const std::vector<double>& t = times[{k.graph, k.kernel}];
    if (t.empty()) continue;  // seen only while warming up
    const std::vector<double>& st = starts[{k.graph, k.kernel}];
    if (st.size() == t.size()) k.startMs = median(st);
    if (const std::vector<double>& la = launches[{k.graph, k.kernel}]; la.size() == t.size()) k.launchMs = median(la);
    Spread s = spreadOf(t);
    k.medianMs = s.median;
    k.minMs = *std::min_element(t.begin(), t.end());
    k.maxMs = *std::max_element(t.begin(), t.end());
    k.p10Ms = s.p10;
    k.p90Ms = s.p90;
    k.samples = static_cast<int>(t.size());
  }
  return out;
}

size_t recomputedCount(const std::vector<StoredKernelOp>& ops) {
  return static_cast<size_t>(std::count_if(ops.begin(), ops.end(), [](const StoredKernelOp& o) { return o.recomputed; }));
}

std::string opListText(const std::vector<StoredKernelOp>& ops) {
  std::string s;
  for (const StoredKernelOp& o : ops) s += (s.empty() ? "" : " ") + primBaseName(o.op) + (o.recomputed ? "*" : "");
  if (size_t r = recomputedCount(ops))
    s += " (" + std::to_string(r) + " of " + std::to_string(ops.size()) + " recomputed in the backward)";
  return s;
}

std::vector<double> iterationTotals(const SessionStore& store, int64_t session) {
  std::map<int, double> total;
  for (const ProfileSample& s : latestRun(store, session)) total[s.iteration] += s.ms;
  std::vector<double> out;
  for (const auto& [it, ms] : total) out.push_back(ms);
  return out;
}

}  // namespace fusebox
