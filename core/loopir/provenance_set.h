// An immutable, shared, sorted set of traced-node ids: the provenance of a value during lowering.
// Copies share one vector; a union returns an operand unchanged when it already holds the other,
// so a value whose paths rejoin (a diamond, a residual) never holds an id twice and never grows
// past the number of traced nodes.
#pragma once

#include <memory>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox {

class ProvenanceSet {
public:
  ProvenanceSet() = default;
  explicit ProvenanceSet(std::vector<NodeId> ids);  // sorted and deduplicated here

  // The union; shares an operand's storage when it already contains the other.
  static ProvenanceSet merge(const ProvenanceSet& a, const ProvenanceSet& b);

  const std::vector<NodeId>& ids() const;
  size_t size() const { return ids_ ? ids_->size() : 0; }
  bool empty() const { return size() == 0; }

private:
  std::shared_ptr<const std::vector<NodeId>> ids_;
};

}  // namespace fusebox
