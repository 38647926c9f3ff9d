// Deterministic, platform-independent random numbers: parameter init, demo inputs, dropout.
// Dropout uses a counter-based hash of (seed, element index) so that every backend can
// reproduce the same mask without sharing generator state.
#pragma once

#include <cstdint>

namespace fusebox {

uint64_t splitmix64(uint64_t x);

class Rng {
public:
  explicit Rng(uint64_t seed) : state_(splitmix64(seed ^ 0x9E3779B97F4A7C15ull)) {}
  uint64_t next() { return splitmix64(state_++); }
  double uniform();  // [0, 1)
  double normal();   // standard normal (Box-Muller)

private:
  uint64_t state_;
};

// Uniform [0, 1) value for element `index` of a dropout with `seed`.
double dropoutUniform(uint64_t seed, uint64_t index);

}  // namespace fusebox
