#include "report/session_compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/graph_layout.h"

namespace fusebox {

namespace {

using Ids = std::set<int64_t>;

// Traced node id -> "op (scope)" from the stored traced graph; "n12" for one it does not name.
class TracedLabels {
public:
  TracedLabels(const SessionStore& store, int64_t session) {
    std::map<std::string, std::string> dotLabels;
    for (const StageArtifact& a : store.artifacts(session))
      if (a.stage == "trace" && a.format == "dot") try {
          for (const DotNode& n : parseDot(a.body).nodes) dotLabels[n.name] = n.label.substr(0, n.label.find('\n'));
        } catch (const LayoutError&) {  // an undrawable graph: its ops are named by id
        }
    for (const StoredNode& n : store.nodes(session, "trace")) {
      auto l = dotLabels.find(n.node);
      if (n.origins.size() == 1 && l != dotLabels.end() && !l->second.empty())
        labels_[n.origins[0]] = l->second + (n.scope.empty() ? "" : " (" + n.scope + ")");
    }
  }
  std::string operator()(int64_t id) const {
    auto it = labels_.find(id);
    return it != labels_.end() ? it->second : "n" + std::to_string(id);
  }

private:
  std::map<int64_t, std::string> labels_;
};

std::string joinLabels(const Ids& ids, const TracedLabels& label, size_t most = 4) {
  std::string s;
  size_t n = 0;
  for (int64_t id : ids) {
    if (n++ == most) return s + ", … (" + std::to_string(ids.size()) + " in all)";
    s += (s.empty() ? "" : ", ") + label(id);
  }
  return s;
}

// Per graph, traced op -> the kernels computing it, and the traced ops those kernels compute.
struct Computed {
  std::vector<std::string> kernels;
  Ids with;
};
std::map<std::pair<std::string, int64_t>, Computed> computedBy(const std::vector<StoredKernel>& ks) {
  std::map<std::pair<std::string, int64_t>, Computed> out;
  for (const StoredKernel& k : ks)
    for (int64_t t : k.provenance) {
      Computed& c = out[{k.graph, t}];
      c.kernels.push_back(k.name);
      c.with.insert(k.provenance.begin(), k.provenance.end());
    }
  for (auto& [key, c] : out) c.with.erase(key.second);
  return out;
}

std::vector<TracedRegrouping> regroupings(const std::vector<StoredKernel>& ka, const std::vector<StoredKernel>& kb, const TracedLabels& label) {
  auto ca = computedBy(ka), cb = computedBy(kb);
  std::set<std::pair<std::string, int64_t>> keys;
  for (const auto& [k, c] : ca) keys.insert(k);
  for (const auto& [k, c] : cb) keys.insert(k);
  std::vector<TracedRegrouping> out;
  for (const auto& key : keys) {
    const Computed none;
    auto ia = ca.find(key), ib = cb.find(key);
    const Computed& a = ia != ca.end() ? ia->second : none;
    const Computed& b = ib != cb.end() ? ib->second : none;
    if (ia != ca.end() && ib != cb.end() && a.with == b.with && a.kernels.size() == b.kernels.size()) continue;
    TracedRegrouping r{key.first, key.second, label(key.second), a.kernels, b.kernels, {}, {}};
    for (int64_t t : a.with) r.matesA.push_back(label(t));
    for (int64_t t : b.with) r.matesB.push_back(label(t));
    out.push_back(std::move(r));
  }
  return out;
}

// Decisions keyed by what their nodes compute: (graph, kind, traced ids of each node).
std::vector<DecisionDiff> decisionDiffs(const SessionStore& sa, int64_t a, const SessionStore& sb, int64_t b, const TracedLabels& label) {
  using Key = std::tuple<std::string, std::string, Ids, Ids>;
  struct Side {
    std::string nodes, reason;
    bool fused = false;
  };
  auto keyed = [](const SessionStore& s, int64_t session) {
    std::map<std::pair<std::string, std::string>, Ids> origins;
    for (const StoredNode& n : s.nodes(session, "schedule")) origins[{n.graph, n.node}] = Ids(n.origins.begin(), n.origins.end());
    std::map<Key, Side> out;
    for (const StoredDecision& d : s.decisions(session)) {
      std::string f = "l" + std::to_string(d.first), g = "l" + std::to_string(d.second);
      Ids of = origins[{d.graph, f}], og = origins[{d.graph, g}];
      if (of.empty() && og.empty()) of = {-1 - d.first}, og = {-1 - d.second};  // a file without node origins: by id
      out[{d.graph, d.kind, of, og}] = {f + " + " + g, d.reason, d.fused};
    }
    return out;
  };
  std::map<Key, Side> da = keyed(sa, a), db = keyed(sb, b);
  std::set<Key> keys;
  for (const auto& [k, d] : da) keys.insert(k);
  for (const auto& [k, d] : db) keys.insert(k);
  std::vector<DecisionDiff> out;
  for (const Key& k : keys) {
    auto ia = da.find(k), ib = db.find(k);
    Side x = ia != da.end() ? ia->second : Side{}, y = ib != db.end() ? ib->second : Side{};
    if (x.fused == y.fused) continue;  // the same outcome (reasons may differ in wording only)
    const auto& [graph, kind, first, second] = k;
    Ids f, s;
    for (int64_t id : first) if (id >= 0) f.insert(id);
    for (int64_t id : second) if (id >= 0) s.insert(id);
    out.push_back({graph, kind, joinLabels(f, label, 2) + " + " + joinLabels(s, label, 2), x.nodes, y.nodes, x.reason, y.reason, x.fused, y.fused});
  }
  return out;
}

// Pairs the kernels of the two runs, graph by graph, most traced ops in common first.
std::vector<KernelDelta> kernelDeltas(const std::vector<KernelTiming>& ta, const std::vector<KernelTiming>& tb,
                                      const std::vector<StoredKernel>& ka, const std::vector<StoredKernel>& kb) {
  auto provenance = [](const std::vector<StoredKernel>& ks) {
    std::map<std::pair<std::string, std::string>, Ids> out;
    for (const StoredKernel& k : ks) out[{k.graph, k.name}] = Ids(k.provenance.begin(), k.provenance.end());
    return out;
  };
  auto pa = provenance(ka), pb = provenance(kb);
  struct Candidate {
    double overlap;
    size_t i, j;
  };
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < ta.size(); ++i)
    for (size_t j = 0; j < tb.size(); ++j) {
      if (ta[i].graph != tb[j].graph) continue;
      const Ids& x = pa[{ta[i].graph, ta[i].kernel}];
      const Ids& y = pb[{tb[j].graph, tb[j].kernel}];
      size_t common = 0;
      for (int64_t id : x) common += y.count(id);
      size_t either = x.size() + y.size() - common;
      double overlap = either ? static_cast<double>(common) / static_cast<double>(either) : (ta[i].kernel == tb[j].kernel ? 1.0 : 0.0);
      if (overlap > 0) candidates.push_back({overlap, i, j});
    }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) { return x.overlap > y.overlap; });
  std::vector<int> partnerOfA(ta.size(), -1), partnerOfB(tb.size(), -1);
  std::vector<double> overlapOfA(ta.size(), 0);
  for (const Candidate& c : candidates)
    if (partnerOfA[c.i] < 0 && partnerOfB[c.j] < 0) {
      partnerOfA[c.i] = static_cast<int>(c.j);
      partnerOfB[c.j] = static_cast<int>(c.i);
      overlapOfA[c.i] = c.overlap;
    }
  auto halfSpread = [](const KernelTiming& t) { return (t.p90Ms - t.p10Ms) / 2; };
  std::vector<KernelDelta> out;
  for (size_t i = 0; i < ta.size(); ++i) {
    KernelDelta d{ta[i].graph, ta[i].kernel, "", ta[i].medianMs, 0, halfSpread(ta[i]), 0};
    if (partnerOfA[i] >= 0) {
      const KernelTiming& b = tb[static_cast<size_t>(partnerOfA[i])];
      d.kernelB = b.kernel;
      d.msB = b.medianMs;
      d.noiseMs += halfSpread(b);
      d.overlap = overlapOfA[i];
    }
    out.push_back(d);
  }
  for (size_t j = 0; j < tb.size(); ++j)
    if (partnerOfB[j] < 0) out.push_back({tb[j].graph, "", tb[j].kernel, 0, tb[j].medianMs, halfSpread(tb[j]), 0});
  return out;
}

}  // namespace

FusionComparison compareSessions(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b) {
  FusionComparison c;
  c.a = storeA.session(a);
  c.b = storeB.session(b);
  // Traced ids only mean the same thing in two compiles of one model: refuse anything else.
  if (c.a.model != c.b.model)
    throw SessionError("cannot compare session " + std::to_string(a) + " (model " + c.a.model + ") with session " + std::to_string(b) +
                       " (model " + c.b.model + "): a fusion comparison needs two sessions of the same model");
  TracedLabels label(storeA, a);
  std::vector<StoredKernel> ka = storeA.kernels(a), kb = storeB.kernels(b);
  c.kernelsA = static_cast<int>(ka.size());
  c.kernelsB = static_cast<int>(kb.size());
  c.regrouped = regroupings(ka, kb, label);
  c.decisions = decisionDiffs(storeA, a, storeB, b, label);
  c.timingsA = latestRunTimings(storeA, a);
  c.timingsB = latestRunTimings(storeB, b);
  if (!c.timingsA.empty() && !c.timingsB.empty()) c.kernels = kernelDeltas(c.timingsA, c.timingsB, ka, kb);
  auto totals = [](const SessionStore& s, int64_t session) {
    std::vector<double> t = iterationTotals(s, session);
    t.erase(t.begin(), t.begin() + warmupIterations(t.size()));
    return spreadOf(t);
  };
  Spread sa = totals(storeA, a), sb = totals(storeB, b);
  c.totalMsA = sa.median;
  c.totalMsB = sb.median;
  c.totalNoiseMs = (sa.p90 - sa.p10 + sb.p90 - sb.p10) / 2;
  return c;
}

}  // namespace fusebox
