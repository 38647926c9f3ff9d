#include "core/ir/name_table.h"

namespace fusebox {

// "relu_12" -> base "relu", K 12, when "relu" has suffixes tracked and 12 is written canonically.
NameTable::Suffixes* NameTable::suffixesOf(const std::string& name, int64_t* k) {
  size_t us = name.rfind('_');
  if (us == std::string::npos || us + 1 >= name.size() || name.size() - us - 1 > 18 || name[us + 1] == '0') return nullptr;
  int64_t v = 0;
  for (size_t i = us + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return nullptr;
    v = v * 10 + (name[i] - '0');
  }
  auto it = suffixes_.find(name.substr(0, us));
  if (it == suffixes_.end()) return nullptr;
  *k = v;
  return &it->second;
}

void NameTable::insert(const std::string& name) {
  if (!names_.insert(name).second) return;
  int64_t k;
  if (Suffixes* s = suffixesOf(name, &k); s && k < s->next) s->freed.erase(k);
}

void NameTable::erase(const std::string& name) {
  if (!names_.erase(name)) return;
  int64_t k;
  if (Suffixes* s = suffixesOf(name, &k); s && k < s->next) s->freed.insert(k);
}

std::string NameTable::unique(const std::string& base) {
  if (!contains(base)) return base;
  Suffixes& s = suffixes_[base];
  if (!s.freed.empty()) return base + "_" + std::to_string(*s.freed.begin());
  while (contains(base + "_" + std::to_string(s.next))) ++s.next;
  return base + "_" + std::to_string(s.next);
}

}  // namespace fusebox
