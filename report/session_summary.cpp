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

int warmupIterations(size_t iterations) { return iterations >= 3 ? 1 : 0; }

std::vector<KernelTiming> latestRunTimings(const SessionStore& store, int64_t session) {
  std::vector<KernelTiming> out;
  std::vector<ProfileSample> run = latestRun(store, session);
  std::set<int> iterations;
  for (const ProfileSample& s : run) iterations.insert(s.iteration);
  std::set<int> warmup(iterations.begin(), std::next(iterations.begin(), warmupIterations(iterations.size())));
  std::map<std::pair<std::string, std::string>, std::vector<double>> times;
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
    if (!warmup.count(s.iteration)) times[key].push_back(s.ms);
  }
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  std::map<std::pair<std::string, std::string>, std::vector<StoredKernelOp>> ops;
  for (StoredKernel& k : store.kernels(session)) ops[{k.graph, k.name}] = std::move(k.ops);
  for (KernelTiming& k : out) {
    if (auto o = ops.find({k.graph, k.kernel}); o != ops.end()) k.ops = o->second;
    const std::vector<double>& t = times[{k.graph, k.kernel}];
    if (t.empty()) continue;  // seen only while warming up
    k.medianMs = median(t);
    k.minMs = *std::min_element(t.begin(), t.end());
    k.maxMs = *std::max_element(t.begin(), t.end());
    k.p10Ms = quantile(t, 0.1);
    k.p90Ms = quantile(t, 0.9);
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

FusionComparison compareSessions(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b) {
  FusionComparison c;
  c.a = storeA.session(a);
  c.b = storeB.session(b);
  // Node ids only mean the same thing in two compiles of one model: refuse anything else.
  if (c.a.model != c.b.model)
    throw SessionError("cannot compare session " + std::to_string(a) + " (model " + c.a.model + ") with session " + std::to_string(b) +
                       " (model " + c.b.model + "): a fusion comparison needs two sessions of the same model");
  // node -> (kernel name, kernel-mates) per graph
  using Grouping = std::map<std::pair<std::string, int>, std::pair<std::string, std::vector<int>>>;
  auto grouping = [](const std::vector<StoredKernel>& ks) {
    Grouping g;
    for (const StoredKernel& k : ks)
      for (int n : k.nodes) {
        std::vector<int> mates;
        for (int m : k.nodes)
          if (m != n) mates.push_back(m);
        std::sort(mates.begin(), mates.end());
        g[{k.graph, n}] = {k.name, mates};
      }
    return g;
  };
  std::vector<StoredKernel> ka = storeA.kernels(a), kb = storeB.kernels(b);
  c.kernelsA = static_cast<int>(ka.size());
  c.kernelsB = static_cast<int>(kb.size());
  Grouping ga = grouping(ka), gb = grouping(kb);
  std::set<std::pair<std::string, int>> nodes;
  for (const auto& [key, v] : ga) nodes.insert(key);
  for (const auto& [key, v] : gb) nodes.insert(key);
  for (const auto& key : nodes) {
    auto ia = ga.find(key), ib = gb.find(key);
    std::vector<int> ma = ia != ga.end() ? ia->second.second : std::vector<int>{};
    std::vector<int> mb = ib != gb.end() ? ib->second.second : std::vector<int>{};
    if (ia != ga.end() && ib != gb.end() && ma == mb) continue;
    c.regrouped.push_back({key.first, key.second, ia != ga.end() ? ia->second.first : "", ib != gb.end() ? ib->second.first : "", ma, mb});
  }
  using Key = std::tuple<std::string, int, int, std::string>;
  std::map<Key, StoredDecision> da, db;
  for (const StoredDecision& d : storeA.decisions(a)) da[{d.graph, d.first, d.second, d.kind}] = d;
  for (const StoredDecision& d : storeB.decisions(b)) db[{d.graph, d.first, d.second, d.kind}] = d;
  std::set<Key> keys;
  for (const auto& [k, d] : da) keys.insert(k);
  for (const auto& [k, d] : db) keys.insert(k);
  for (const Key& k : keys) {
    auto ia = da.find(k), ib = db.find(k);
    bool fa = ia != da.end() && ia->second.fused, fb = ib != db.end() && ib->second.fused;
    std::string ra = ia != da.end() ? ia->second.reason : "", rb = ib != db.end() ? ib->second.reason : "";
    if (fa == fb) continue;  // the same outcome (reasons may differ in wording only)
    c.decisions.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), ra, rb, fa, fb});
  }
  c.timingsA = latestRunTimings(storeA, a);
  c.timingsB = latestRunTimings(storeB, b);
  for (const KernelTiming& t : c.timingsA) c.totalMsA += t.medianMs;
  for (const KernelTiming& t : c.timingsB) c.totalMsB += t.medianMs;
  return c;
}

}  // namespace fusebox
