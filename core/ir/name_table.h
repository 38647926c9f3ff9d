// The set of value names in a graph, with unique names in amortized O(log n): "h" when free,
// else "h_1", "h_2", ... (the smallest free suffix, as a linear probe would pick, so names stay
// what they were) without probing every taken suffix again for each new value.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>

namespace fusebox {

class NameTable {
public:
  bool contains(const std::string& name) const { return names_.count(name) > 0; }
  void insert(const std::string& name);
  void erase(const std::string& name);
  // `base` when free, else base_K for the smallest K >= 1 that is free. Does not insert it.
  std::string unique(const std::string& base);

private:
  // Per base: every suffix below `next` is taken, except those in `freed`.
  struct Suffixes {
    int64_t next = 1;
    std::set<int64_t> freed;
  };
  Suffixes* suffixesOf(const std::string& name, int64_t* k);  // when `name` is base_K and base is tracked

  std::unordered_set<std::string> names_;
  std::map<std::string, Suffixes> suffixes_;
};

}  // namespace fusebox
