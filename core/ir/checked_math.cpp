#include "core/ir/checked_math.h"

namespace fusebox {

std::optional<int64_t> numelWithin(const std::vector<int64_t>& sizes, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : sizes) {
    if (d < 0 || (d > 0 && n > limit / d)) return std::nullopt;
    n *= d;
  }
  return n;
}

}  // namespace fusebox
