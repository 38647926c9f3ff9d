#include "core/loopir/provenance_set.h"

#include <algorithm>
#include <iterator>

namespace fusebox {

ProvenanceSet::ProvenanceSet(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty()) ids_ = std::make_shared<const std::vector<NodeId>>(std::move(ids));
}

const std::vector<NodeId>& ProvenanceSet::ids() const {
  static const std::vector<NodeId> none;
  return ids_ ? *ids_ : none;
}

ProvenanceSet ProvenanceSet::merge(const ProvenanceSet& a, const ProvenanceSet& b) {
  if (b.empty() || a.ids_ == b.ids_) return a;
  if (a.empty()) return b;
  const std::vector<NodeId>& x = *a.ids_;
  const std::vector<NodeId>& y = *b.ids_;
  if (x.size() >= y.size() && std::includes(x.begin(), x.end(), y.begin(), y.end())) return a;
  if (y.size() > x.size() && std::includes(y.begin(), y.end(), x.begin(), x.end())) return b;
  std::vector<NodeId> u;
  u.reserve(x.size() + y.size());
  std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(u));
  ProvenanceSet r;
  r.ids_ = std::make_shared<const std::vector<NodeId>>(std::move(u));
  return r;
}

}  // namespace fusebox
