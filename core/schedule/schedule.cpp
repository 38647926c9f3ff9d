#include "core/schedule/schedule.h"

#include "core/ir/error.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

namespace fusebox {

std::map<std::string, IndexExpr> kernelVarMap(const LoopNode& n, bool row, int64_t M, int64_t K) {
  IndexExpr m = IndexExpr::var("m", M), k = IndexExpr::var("k", K);
  std::map<std::string, IndexExpr> map;
  auto assign = [&](const std::vector<LoopVar>& vars, const IndexExpr& flat) {
    std::vector<int64_t> sizes;
    for (const LoopVar& v : vars) sizes.push_back(v.size);
    std::vector<IndexExpr> idx = unflatten(flat, sizes);
    for (size_t i = 0; i < vars.size(); ++i) map[vars[i].name] = idx[i];
  };
  if (n.kind == LoopNode::Kind::Reduction) {
    assign(n.vars, m);
    assign(n.reduceVars, k);
  } else {
    assign(n.vars, row ? m : m * IndexExpr(K) + k);
  }
  return map;
}

namespace {

std::string mb(int64_t bytes) {
  char buf[32];
  if (bytes >= 1 << 20) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1024.0);
  return buf;
}

IndexExpr storeIndex(const LoopNode& n) {
  std::vector<IndexExpr> idx;
  std::vector<int64_t> sizes;
  for (const LoopVar& v : n.vars) idx.push_back(IndexExpr::var(v.name, v.size)), sizes.push_back(v.size);
  return linearIndex(idx, Layout::contiguous(sizes).strides);
}

struct Group {
  std::vector<int> nodes;
  bool alive = true;
};

class Scheduler {
public:
  Scheduler(const LoopProgram& p, const ScheduleConfig& c) : p_(p), cfg_(c) {
    for (const LoopNode& n : p.nodes) producerOf_.emplace(n.output, n.id);
    for (const Buffer& b : p.buffers) bufferOf_.emplace(b.name, &b);
    consumers_.resize(p.nodes.size());
    producers_.resize(p.nodes.size());
    for (const LoopNode& n : p.nodes) {
      groups_.push_back(Group{{n.id}});
      groupOf_.push_back(n.id);
      version_.push_back(0);
      for (const std::string& b : n.reads()) {
        readers_[b].push_back(n.id);
        if (const LoopNode* prod = producer(b)) consumers_[prod->id].push_back(n.id), producers_[n.id].push_back(prod->id);
      }
    }
    for (auto* table : {&consumers_, &producers_})
      for (std::vector<int>& c : *table) {
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
      }
    if (cfg_.fusion && cfg_.convEpilogues && cfg_.concatInPlace)
      for (const LoopNode& n : p.nodes) {
        std::string why;
        if (std::optional<ConcatInPlace> c = matchConcatInPlace(p, n, readers_, why)) {
          for (const ConcatSlice& sl : c->slices) sliceOf_[sl.conv] = sl;
          concats_[n.id] = std::move(*c);
        } else if (why != kNotAConcatenation) {
          copiedConcats_[n.id] = why;
        }
      }
    seen_.assign(groups_.size(), 0);
    rank_.resize(groups_.size());
    std::iota(rank_.begin(), rank_.end(), 0);  // nodes are in topological order
  }

  Schedule run() {
    if (cfg_.fusion) fuse();
    logConcatsInPlace();
    logCopiedConcats();
    return build();
  }

private:
  const LoopNode* producer(const std::string& buffer) const {
    auto it = producerOf_.find(buffer);
    return it == producerOf_.end() ? nullptr : &p_.nodes[it->second];
  }
  const std::vector<int>& consumersOf(int node) const { return consumers_[node]; }
  const Buffer& buffer(const std::string& name) const {
    auto it = bufferOf_.find(name);
    return it == bufferOf_.end() ? p_.buffer(name) : *it->second;  // p_.buffer throws for unknown names
  }

  // The grid of a set of nodes: (M, K), or nullopt with the reason they cannot share one.
  struct Grid {
    int64_t M = 1, K = 1;
    std::map<int, bool> row;  // node -> row item
  };

  std::string geometryStr(const std::vector<int>& nodes) const {
    for (int id : nodes)
      if (p_.nodes[id].kind == LoopNode::Kind::Reduction)
        return std::to_string(p_.nodes[id].numel()) + "x" + std::to_string(p_.nodes[id].reductionNumel());
    return std::to_string(p_.nodes[nodes[0]].numel());
  }

  // Bytes a kernel reads of `b`: all of it, except when it is only gathered from (a loss picking
  // one logit per row), where it is one element per gather point.
  int64_t bytesReadOf(const Kernel& k, const std::string& b) const {
    const Buffer& buf = buffer(b);
    int64_t gathered = 0;
    std::function<bool(const LExpr&, int64_t)> visit = [&](const LExpr& e, int64_t points) {
      if (e.buffer == b && e.kind == LExpr::Kind::Load) return false;
      if (e.buffer == b && e.kind == LExpr::Kind::LoadIndirect) gathered += points * dtypeBytes(buf.dtype);
      for (const LExprPtr& a : e.args)
        if (!visit(*a, points)) return false;
      return true;
    };
    for (const KernelItem& it : k.items) {
      const LoopNode& n = p_.nodes[it.node];
      if (n.kind == LoopNode::Kind::Extern) {
        if (std::find(n.externInputs.begin(), n.externInputs.end(), b) != n.externInputs.end()) return buf.bytes();
        continue;
      }
      if (!visit(*n.body, n.numel() * n.reductionNumel())) return buf.bytes();
    }
    return std::min(buf.bytes(), gathered);
  }

  bool gridOf(const std::vector<int>& nodes, Grid& g, std::string& why) const {
    const LoopNode* red = nullptr;
    for (int id : nodes) {
      const LoopNode& n = p_.nodes[id];
      if (n.kind != LoopNode::Kind::Reduction) continue;
      if (red && (red->numel() != n.numel() || red->reductionNumel() != n.reductionNumel())) {
        why = "incompatible reductions " + std::to_string(red->numel()) + "x" + std::to_string(red->reductionNumel()) +
              " vs " + std::to_string(n.numel()) + "x" + std::to_string(n.reductionNumel());
        return false;
      }
      red = &n;
    }
    g.M = red ? red->numel() : p_.nodes[nodes[0]].numel();
    g.K = red ? red->reductionNumel() : 1;
    for (int id : nodes) {
      const LoopNode& n = p_.nodes[id];
      if (n.kind == LoopNode::Kind::Reduction) {
        g.row[id] = false;
      } else if (n.numel() == g.M * g.K) {
        g.row[id] = false;
      } else if (red && n.numel() == g.M) {
        g.row[id] = true;
      } else {
        why = "incompatible iteration space " + geometryStr(nodes) + " vs " + std::to_string(n.numel());
        return false;
      }
    }
    return true;
  }

  // Every read inside the set must be of the point being computed.
  bool aligned(const std::vector<int>& nodes, const Grid& g, std::string& why) const {
    std::set<int> in(nodes.begin(), nodes.end());
    for (int cid : nodes) {
      const LoopNode& c = p_.nodes[cid];
      if (c.kind == LoopNode::Kind::Extern) continue;
      std::vector<std::pair<std::string, IndexExpr>> loads;
      c.body->collectLoads(loads);
      auto cmap = kernelVarMap(c, g.row.at(cid), g.M, g.K);
      for (auto& [buf, idx] : loads) {
        const LoopNode* prod = producer(buf);
        if (!prod || !in.count(prod->id)) continue;
        // A gathered element may be any of the producer's points, not the one computed here.
        if (c.body->readsIndirectly(buf)) {
          why = c.output + " gathers from " + buf + " at data-dependent indices";
          return false;
        }
        if (!g.row.at(prod->id) && prod->kind != LoopNode::Kind::Reduction && g.row.at(cid)) {
          why = "a per-row node cannot read " + buf + " computed per element";
          return false;
        }
        IndexExpr read = idx.substitute(cmap);
        bool prodRow = g.row.at(prod->id) || prod->kind == LoopNode::Kind::Reduction;
        IndexExpr stored = storeIndex(*prod).substitute(kernelVarMap(*prod, prodRow && prod->kind != LoopNode::Kind::Reduction, g.M, g.K));
        if (read != stored) {
          why = "incompatible index: " + c.output + " reads " + buf + "[" + read.str() + "] but it is computed at [" +
                stored.str() + "]";
          return false;
        }
      }
    }
    return true;
  }

  // A horizontal pair saves the second read of a buffer both sides read only where they read it
  // at the same point of the grid; read elsewhere (a transposed copy beside the original), the
  // merged kernel reads it twice anyway, and the common grid scrambles the indices of one side
  // (its loads stop being linear in k: no vector loads).
  bool readAtOnePoint(const std::vector<int>& a, const std::vector<int>& b, const Grid& g, std::string& why) const {
    auto points = [&](const std::vector<int>& nodes) {
      std::vector<std::pair<std::string, IndexExpr>> out;
      for (int id : nodes) {
        const LoopNode& n = p_.nodes[id];
        if (!n.body) continue;
        std::vector<std::pair<std::string, IndexExpr>> loads;
        n.body->collectLoads(loads);
        auto vars = kernelVarMap(n, g.row.at(id), g.M, g.K);
        for (auto& [buf, idx] : loads) out.emplace_back(buf, idx.substitute(vars));
      }
      return out;
    };
    auto pa = points(a), pb = points(b);
    for (const auto& x : pa)
      for (const auto& y : pb)
        if (x.first == y.first && x.second == y.second && !x.second.variables().empty()) return true;  // not a scalar
    why = "no read is shared: the two sides read their common inputs at different points";
    return false;
  }

  // Whether group `to` is reachable from `from` (through another group when skipDirect). True
  // also when the search visits more than kCycleSearchGroups groups without an answer: not
  // fusing is always correct, and the search stays bounded on huge graphs.
  static constexpr int kCycleSearchGroups = 2048;
  // Groups ranked after `to` in the topological order rank_ cannot reach it: the search stays
  // within the groups between the two.
  bool reaches(int from, int to, bool skipDirect) const {
    if (rank_[from] > rank_[to]) return false;
    std::vector<int> stack;
    ++stamp_;
    for (int n : groups_[from].nodes)
      for (int c : consumersOf(n)) {
        int gc = groupOf_[c];
        if (gc == from || (skipDirect && gc == to) || rank_[gc] > rank_[to]) continue;
        stack.push_back(gc);
      }
    int visited = 0;
    while (!stack.empty()) {
      int gidx = stack.back();
      stack.pop_back();
      if (gidx == to) return true;
      if (seen_[gidx] == stamp_) continue;
      seen_[gidx] = stamp_;
      if (++visited > kCycleSearchGroups) return gaveUp_ = true;
      for (int n : groups_[gidx].nodes)
        for (int c : consumersOf(n))
          if (groupOf_[c] != gidx && rank_[groupOf_[c]] <= rank_[to]) stack.push_back(groupOf_[c]);
    }
    return false;
  }

  // Groups reachable from `start` along consumer edges (forward) or producer edges, with a rank
  // strictly between lo and hi, not entering `avoid`.
  std::vector<int> window(int start, int avoid, int lo, int hi, bool forward) const {
    std::vector<int> found, stack{start};
    ++stamp_;
    seen_[start] = stamp_;
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      for (int n : groups_[g].nodes)
        for (int m : forward ? consumersOf(n) : producers_[n]) {
          int gm = groupOf_[m];
          if (gm == g || gm == avoid || seen_[gm] == stamp_ || rank_[gm] <= lo || rank_[gm] >= hi) continue;
          seen_[gm] = stamp_;
          found.push_back(gm);
          stack.push_back(gm);
        }
    }
    return found;
  }

  // Keeps rank_ a topological order of the groups when `keep` absorbs `gone` (no path joins
  // them but direct edges): between the two, whatever reaches the later one moves before the
  // merged group and whatever the earlier one reaches moves after it (Pearce and Kelly's
  // reordering), using the ranks those groups held. Call before the node lists are merged.
  void rerankForMerge(int keep, int gone) {
    int a = rank_[keep] < rank_[gone] ? keep : gone, b = a == keep ? gone : keep;
    std::vector<int> after = window(a, b, rank_[a], rank_[b], true);
    std::vector<int> before = window(b, a, rank_[a], rank_[b], false);
    auto byRank = [&](int x, int y) { return rank_[x] < rank_[y]; };
    std::sort(after.begin(), after.end(), byRank);
    std::sort(before.begin(), before.end(), byRank);
    std::vector<int> pool;
    for (const auto* part : {&before, &after})
      for (int g : *part) pool.push_back(rank_[g]);
    pool.push_back(rank_[a]);
    pool.push_back(rank_[b]);
    std::sort(pool.begin(), pool.end());
    size_t i = 0;
    for (int g : before) rank_[g] = pool[i++];
    rank_[keep] = pool[i++];
    rank_[gone] = -1;  // a dead group: no node maps to it any more
    for (int g : after) rank_[g] = pool[++i];
    moved_ = std::move(before);
    moved_.insert(moved_.end(), after.begin(), after.end());
    moved_.push_back(keep);
  }

  // After a merge: every edge of a group whose rank changed still goes forward in rank_;
  // otherwise (never expected) the order is rebuilt from scratch.
  void checkRanks() {
    for (int g : moved_)
      for (int n : groups_[g].nodes) {
        for (int c : consumersOf(n))
          if (groupOf_[c] != g && rank_[groupOf_[c]] <= rank_[g]) return rebuildRanks();
        for (int q : producers_[n])
          if (groupOf_[q] != g && rank_[groupOf_[q]] >= rank_[g]) return rebuildRanks();
      }
  }

  void rebuildRanks() {
    std::vector<int> indeg(groups_.size(), 0), ready;
    for (size_t g = 0; g < groups_.size(); ++g)
      for (int n : groups_[g].nodes)
        for (int q : producers_[n])
          if (groupOf_[q] != static_cast<int>(g)) ++indeg[g];
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].alive && indeg[g] == 0) ready.push_back(static_cast<int>(g));
    int next = 0;
    while (!ready.empty()) {
      int g = ready.back();
      ready.pop_back();
      rank_[g] = next++;
      for (int n : groups_[g].nodes)
        for (int c : consumersOf(n))
          if (groupOf_[c] != g && --indeg[groupOf_[c]] == 0) ready.push_back(groupOf_[c]);
    }
  }

  static constexpr const char* kCycle = "would create a cycle";

  // Why two groups may not fuse, or "" when they may; *afterCycleTest: the reason was found
  // after the cycle test passed.
  std::string illegal(int ga, int gb, bool* afterCycleTest, bool horizontal = false) const {
    std::vector<int> merged = groups_[ga].nodes;
    merged.insert(merged.end(), groups_[gb].nodes.begin(), groups_[gb].nodes.end());
    for (int id : merged) {
      if (concats_.count(id)) return "n" + std::to_string(id) + " is a concatenation its convolutions write in place";
      if (sliceOf_.count(id)) return "n" + std::to_string(id) + " writes its slice of n" + std::to_string(sliceOf_.at(id).epilogue.concat) + " in place";
    }
    bool withExtern = false;
    for (int id : merged)
      if (p_.nodes[id].kind == LoopNode::Kind::Extern) {
        withExtern = true;
        if (!cfg_.convEpilogues) return "no fusion across the extern " + externPrim(p_.nodes[id].externOp).qualifiedName();
      }
    if (static_cast<int>(merged.size()) > cfg_.maxNodesPerKernel)
      return "kernel size limit (" + std::to_string(cfg_.maxNodesPerKernel) + " nodes)";
    gaveUp_ = false;
    if (reaches(ga, gb, true) || reaches(gb, ga, true))
      return gaveUp_ ? "cycle check gave up after " + std::to_string(kCycleSearchGroups) + " kernels" : kCycle;
    *afterCycleTest = true;
    std::string why;
    if (withExtern) return matchConvEpilogue(p_, merged, readers_, why) ? "" : why;
    Grid g;
    if (!gridOf(merged, g, why) || !aligned(merged, g, why)) return why;
    if (horizontal && !readAtOnePoint(groups_[ga].nodes, groups_[gb].nodes, g, why)) return why;
    if (g.K > 1 && g.M < cfg_.minRowsToAbsorbPointwise)
      for (int id : merged)
        if (p_.nodes[id].kind == LoopNode::Kind::Pointwise && !g.row.at(id) && p_.nodes[id].numel() >= (1 << 16))
          return "would serialize: a " + std::to_string(g.M) + "-row grid cannot absorb " + std::to_string(p_.nodes[id].numel()) +
                 " pointwise elements";
    return "";
  }

  // Each convolution of a concatenation written in place, logged as fused with it: the
  // concatenation's copy (a read and a write of the slice) is what it saves.
  void logConcatsInPlace() {
    for (const auto& [conv, slice] : sliceOf_) {
      const Buffer& part = buffer(p_.nodes[conv].output);
      const Buffer& whole = buffer(slice.epilogue.output);
      int64_t first = slice.epilogue.outputOffset, count = part.layout.numel();
      log_[{conv, slice.epilogue.concat, "vertical"}] = FusionDecision{
          conv, slice.epilogue.concat, "vertical", true,
          "fused: writes elements [" + std::to_string(first) + ", " + std::to_string(first + count) + ") of " + whole.name +
              " in place of the concatenation's copy: " + mb(2 * part.bytes()) + " saved",
          2 * part.bytes()};
    }
  }

  // A concatenation that stays a copy says why beside each of its producers' decisions.
  void logCopiedConcats() {
    for (const auto& [node, why] : copiedConcats_)
      for (int prod : producers_[node]) {
        std::string note = "not written in place of the concatenation: " + why;
        auto it = log_.find({prod, node, "vertical"});
        if (it == log_.end())
          log_[{prod, node, "vertical"}] = FusionDecision{prod, node, "vertical", false, note, 0};
        else if (!it->second.fused)
          it->second.reason += "; " + note;
      }
  }

  struct Candidate {
    int a, b;
    std::string kind;
    int64_t score;
  };

  int64_t verticalScore(int producer, int consumerGroup) const {
    const LoopNode& p = p_.nodes[producer];
    int64_t bytes = buffer(p.output).bytes();
    bool allInside = std::find(p_.outputs.begin(), p_.outputs.end(), p.output) == p_.outputs.end();
    for (int c : consumersOf(producer))
      if (groupOf_[c] != consumerGroup && groupOf_[c] != groupOf_[producer]) allInside = false;
    return allInside ? 2 * bytes : bytes;  // the write and the read, or just the read
  }

  std::vector<Candidate> candidates() const {
    std::vector<Candidate> out;
    for (const LoopNode& n : p_.nodes) {
      for (int c : consumersOf(n.id))
        if (groupOf_[n.id] != groupOf_[c]) out.push_back({n.id, c, "vertical", verticalScore(n.id, groupOf_[c])});
    }
    if (cfg_.horizontal)
      for (const auto& [buf, readers] : readers_)
        for (size_t i = 0; i + 1 < readers.size(); ++i) {
          int a = readers[i], b = readers[i + 1];
          if (groupOf_[a] == groupOf_[b]) continue;
          if (std::binary_search(consumersOf(a).begin(), consumersOf(a).end(), b)) continue;  // already a vertical pair
          out.push_back({a, b, "horizontal", buffer(buf).bytes()});
        }
    std::stable_sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) { return x.score > y.score; });
    return out;
  }

  // A rejection of two groups that have not changed since stands, with one exception: a pair
  // refused for a reason checked after the cycle test may have gained a path through other
  // groups since (paths only appear as groups merge), so only that test is repeated. Each pass
  // thus re-examines in full only pairs whose groups changed, and logs what a full check would.
  struct Rejection {
    int ga, gb, versionA, versionB;
    bool afterCycleTest;
  };

  std::string judge(const Candidate& c, int ga, int gb) {
    auto key = std::make_tuple(c.a, c.b, c.kind);
    auto it = rejected_.find(key);
    if (it != rejected_.end() && it->second.ga == ga && it->second.gb == gb && it->second.versionA == version_[ga] &&
        it->second.versionB == version_[gb]) {
      gaveUp_ = false;
      if (it->second.afterCycleTest && (reaches(ga, gb, true) || reaches(gb, ga, true))) {
        it->second.afterCycleTest = false;
        std::string why = gaveUp_ ? "cycle check gave up after " + std::to_string(kCycleSearchGroups) + " kernels" : kCycle;
        log_[key].reason = why;
        return why;
      }
      return log_.at(key).reason;
    }
    bool afterCycleTest = false;
    std::string why = illegal(ga, gb, &afterCycleTest, c.kind == "horizontal");
    if (!why.empty()) rejected_[key] = Rejection{ga, gb, version_[ga], version_[gb], afterCycleTest};
    return why;
  }

  void fuse() {
    for (int pass = 0; pass < 10; ++pass) {
      bool changed = false;
      for (const Candidate& c : candidates()) {
        int ga = groupOf_[c.a], gb = groupOf_[c.b];
        if (ga == gb) continue;
        std::string why = judge(c, ga, gb);
        bool epilogue = p_.nodes[groups_[ga].nodes[0]].kind == LoopNode::Kind::Extern ||  // node 0: the lowest id
                        p_.nodes[groups_[gb].nodes[0]].kind == LoopNode::Kind::Extern;
        FusionDecision d{c.a, c.b, c.kind, why.empty(),
                         why.empty() ? std::string("fused") + (epilogue ? " into the convolution's epilogue" : "") + ": " + mb(c.score) + " saved" : why,
                         c.score};
        log_[{c.a, c.b, c.kind}] = d;
        if (!why.empty()) continue;
        rerankForMerge(ga, gb);
        for (int n : groups_[gb].nodes) groupOf_[n] = ga;
        groups_[ga].nodes.insert(groups_[ga].nodes.end(), groups_[gb].nodes.begin(), groups_[gb].nodes.end());
        std::sort(groups_[ga].nodes.begin(), groups_[ga].nodes.end());
        groups_[gb].alive = false;
        groups_[gb].nodes.clear();
        ++version_[ga];
        ++version_[gb];
        checkRanks();
        changed = true;
      }
      if (!changed) break;
    }
  }

  Schedule build() {
    Schedule s;
    // Groups in dependency order: a group runs once every producer group has run.
    std::vector<int> order, indeg(groups_.size(), 0);
    std::map<int, std::set<int>> succ;
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      if (!groups_[gi].alive) continue;
      for (int n : groups_[gi].nodes)
        for (int c : consumersOf(n))
          if (groupOf_[c] != static_cast<int>(gi) && succ[gi].insert(groupOf_[c]).second) ++indeg[groupOf_[c]];
    }
    std::vector<int> ready;
    for (size_t gi = 0; gi < groups_.size(); ++gi)
      if (groups_[gi].alive && indeg[gi] == 0) ready.push_back(static_cast<int>(gi));
    while (!ready.empty()) {
      std::sort(ready.begin(), ready.end(), [&](int a, int b) { return groups_[a].nodes[0] > groups_[b].nodes[0]; });
      int gi = ready.back();
      ready.pop_back();
      order.push_back(gi);
      for (int c : succ[gi])
        if (--indeg[c] == 0) ready.push_back(c);
    }
    std::map<std::string, int> kernelOf;  // buffer -> kernel that writes it
    for (int gi : order) {
      const std::vector<int>& nodes = groups_[gi].nodes;
      if (nodes.size() == 1 && concats_.count(nodes[0])) continue;  // written by its convolutions' kernels
      Kernel k;
      k.id = static_cast<int>(s.kernels.size());
      k.isExtern = std::any_of(nodes.begin(), nodes.end(), [&](int id) { return p_.nodes[id].kind == LoopNode::Kind::Extern; });
      if (k.isExtern) {
        for (int id : nodes) k.items.push_back({id, false});
        if (auto slice = sliceOf_.find(nodes[0]); slice != sliceOf_.end()) {
          k.items.push_back({slice->second.epilogue.concat, false});
          k.epilogue = slice->second.epilogue;
        } else if (nodes.size() > 1) {
          std::string why;
          k.epilogue = matchConvEpilogue(p_, nodes, readers_, why);
          if (!k.epilogue) throw Error("schedule: kernel " + std::to_string(k.id) + "'s epilogue no longer matches: " + why);
        }
        k.M = p_.nodes[nodes[0]].numel();
        k.name = "extern" + std::to_string(k.id) + "_" + externPrim(p_.nodes[nodes[0]].externOp).prim;
      } else {
        Grid g;
        std::string why;
        gridOf(nodes, g, why);
        k.M = g.M;
        k.K = g.K;
        for (int id : nodes) k.items.push_back({id, g.row[id]});
        k.name = "kernel" + std::to_string(k.id);
      }
      for (const KernelItem& it : k.items) kernelOf[p_.nodes[it.node].output] = k.id;
      s.kernels.push_back(std::move(k));
    }
    for (Kernel& k : s.kernels) k.segments = segmentsOf(k);
    // Which buffers stay in registers: not an output, read only inside the kernel, and (for
    // values computed per element) only in the loop that computes them.
    for (Kernel& k : s.kernels) {
      std::map<std::string, int> segmentOf;
      for (size_t si = 0; si < k.segments.size(); ++si)
        for (int item : k.segments[si]) segmentOf[p_.nodes[k.items[item].node].output] = static_cast<int>(si);
      std::set<std::string> written, readFromMemory;
      for (const KernelItem& it : k.items) written.insert(p_.nodes[it.node].output);
      for (const KernelItem& it : k.items)
        for (const std::string& b : p_.nodes[it.node].reads())
          if (!written.count(b)) readFromMemory.insert(b);
      for (const std::string& b : written) {
        bool outside = std::find(p_.outputs.begin(), p_.outputs.end(), b) != p_.outputs.end();
        const LoopNode& prod = *producer(b);
        bool perElement = prod.kind == LoopNode::Kind::Pointwise && !isRow(k, prod.id);
        for (int r : readers_.count(b) ? readers_.at(b) : std::vector<int>{}) {
          if (kernelOf[p_.nodes[r].output] != k.id) outside = true;
          else if (perElement && segmentOf[p_.nodes[r].output] != segmentOf[b]) outside = true;
        }
        if (k.isExtern) outside = k.epilogue ? b == k.epilogue->output : true;
        (outside ? k.storedBuffers : k.localBuffers).push_back(b);
      }
      if (k.epilogue) {  // the convolution's inputs and what its epilogue loads (not the rest of a concatenation)
        const LoopNode& conv = p_.nodes[k.items[0].node];
        readFromMemory = std::set<std::string>(conv.externInputs.begin(), conv.externInputs.end());
        for (const std::string* b : {&k.epilogue->bias, &k.epilogue->residual})
          if (!b->empty()) readFromMemory.insert(*b);
      }
      k.readBuffers.assign(readFromMemory.begin(), readFromMemory.end());
      for (const std::string& b : k.readBuffers) k.bytesRead += bytesReadOf(k, b);
      for (const std::string& b : k.storedBuffers)  // a slice of a concatenation: the convolution's output
        k.bytesWritten += buffer(k.epilogue && k.epilogue->concat >= 0 ? p_.nodes[k.items[0].node].output : b).bytes();
    }
    s.memory = planMemory(s, kernelOf);
    for (auto& [key, d] : log_) s.decisions.push_back(d);
    std::sort(s.decisions.begin(), s.decisions.end(), [](const FusionDecision& a, const FusionDecision& b) {
      return std::tie(a.first, a.second, a.kind) < std::tie(b.first, b.second, b.kind);
    });
    return s;
  }

  static bool isRow(const Kernel& k, int node) {
    for (const KernelItem& it : k.items)
      if (it.node == node) return it.row;
    return false;
  }

  std::vector<std::vector<int>> segmentsOf(const Kernel& k) const {
    std::vector<std::vector<int>> segs;
    if (k.isExtern) return {{0}};
    std::set<std::string> reducedInOpenLoop;
    bool open = false;
    for (size_t i = 0; i < k.items.size(); ++i) {
      const LoopNode& n = p_.nodes[k.items[i].node];
      bool needsOpen = false;
      for (const std::string& b : n.reads()) needsOpen |= reducedInOpenLoop.count(b) > 0;
      if (k.items[i].row) {
        segs.push_back({static_cast<int>(i)});
        open = false;
        reducedInOpenLoop.clear();
        continue;
      }
      if (!open || needsOpen) {
        segs.push_back({});
        reducedInOpenLoop.clear();
        open = true;
      }
      segs.back().push_back(static_cast<int>(i));
      if (n.kind == LoopNode::Kind::Reduction) reducedInOpenLoop.insert(n.output);
    }
    return segs;
  }

  MemoryPlan planMemory(const Schedule& s, const std::map<std::string, int>& kernelOf) const {
    MemoryPlan plan;
    std::map<std::string, int> lastUse;
    for (const Kernel& k : s.kernels)
      for (const std::string& b : k.readBuffers) lastUse[b] = k.id;
    std::multimap<int64_t, std::string> freeBlocks;  // bytes -> buffer whose memory is free
    int64_t live = 0, inUse = 0;
    std::map<int, std::vector<std::string>> dying;
    std::set<std::string> placed;
    for (const Kernel& k : s.kernels) {
      for (const std::string& b : k.storedBuffers) {
        const Buffer& buf = buffer(b);
        if (buf.kind != Buffer::Kind::Intermediate || !placed.insert(b).second) continue;  // a concatenation's later slices
        plan.totalIntermediateBytes += buf.bytes();
        auto it = freeBlocks.find(buf.bytes());
        if (it != freeBlocks.end()) {
          plan.reuse.emplace_back(b, it->second);
          freeBlocks.erase(it);
        } else {
          live += buf.bytes();
        }
        plan.peakIntermediateBytes = std::max(plan.peakIntermediateBytes, live);
        inUse += buf.bytes();
        dying[lastUse.count(b) ? lastUse[b] : k.id].push_back(b);
      }
      plan.liveBytes.push_back(inUse);
      plan.allocatedBytes.push_back(live);
      for (const std::string& b : dying[k.id]) {
        freeBlocks.emplace(buffer(b).bytes(), b);
        inUse -= buffer(b).bytes();
      }
    }
    return plan;
  }

  const LoopProgram& p_;
  ScheduleConfig cfg_;
  std::vector<Group> groups_;
  std::vector<int> groupOf_;  // node -> group index
  std::vector<int> version_;  // group -> how many times it has changed
  std::map<std::string, std::vector<int>> readers_;
  std::unordered_map<std::string, int> producerOf_;  // buffer -> the node that writes it
  std::unordered_map<std::string, const Buffer*> bufferOf_;
  std::vector<std::vector<int>> consumers_;         // node -> nodes reading its output, ascending
  std::vector<std::vector<int>> producers_;         // node -> nodes whose outputs it reads, ascending
  std::vector<int> rank_;                           // group -> position in a topological order of the groups
  std::vector<int> moved_;                          // groups whose rank the last merge changed
  std::map<std::tuple<int, int, std::string>, FusionDecision> log_;
  std::map<std::tuple<int, int, std::string>, Rejection> rejected_;
  std::map<int, ConcatInPlace> concats_;  // concatenation node -> its slices, written in place
  std::map<int, ConcatSlice> sliceOf_;    // conv2d node -> the slice it writes
  std::map<int, std::string> copiedConcats_;  // concatenation node -> why its convolutions cannot write it
  mutable std::vector<int> seen_;  // reaches(): group -> the search that last visited it
  mutable int stamp_ = 0;
  mutable bool gaveUp_ = false;  // the last reaches() hit kCycleSearchGroups
};

}  // namespace

Schedule schedule(const LoopProgram& p, const ScheduleConfig& config) { return Scheduler(p, config).run(); }

std::string Schedule::str() const {
  std::ostringstream os;
  for (const Kernel& k : kernels) {
    os << k.name << " [" << k.M << " x " << k.K << "]:";
    for (const KernelItem& it : k.items) os << " n" << it.node << (it.row ? "(row)" : "");
    os << "  writes";
    for (const std::string& b : k.storedBuffers) os << " " << b;
    if (!k.localBuffers.empty()) {
      os << "  keeps";
      for (const std::string& b : k.localBuffers) os << " " << b;
    }
    os << "\n";
  }
  os << "fusion decisions:\n";
  for (const FusionDecision& d : decisions)
    os << "  n" << d.first << " + n" << d.second << " (" << d.kind << "): " << (d.fused ? "" : "not fused: ") << d.reason
       << "\n";
  os << "peak intermediate memory: " << memory.peakIntermediateBytes << " bytes (" << memory.totalIntermediateBytes
     << " without reuse)\n";
  return os.str();
}

}  // namespace fusebox
