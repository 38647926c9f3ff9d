// An on-disk cache of compiled CPU modules: the host object code and the optimized LLVM IR of a
// generated source, keyed by a digest of the source, the target CPU and the compiler version, so a
// second run of the same model (another process, another day) compiles nothing. Files are written
// whole (temp + rename) and read back only when complete and well-formed: a truncated or foreign
// file is a miss, never an error. The directory is bounded: the least recently used entries go.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fusebox {

struct CachedObject {
  std::string object;  // relocatable object file for the host
  std::string llvmIR;  // the optimized IR it was made from (for listings)
};

class CompiledObjectCache {
 public:
  // The directory in use: $FUSEBOX_CACHE_DIR, else $XDG_CACHE_HOME/fusebox, else ~/.cache/fusebox
  // (each + "/cpu"); empty (disabled) when FUSEBOX_CACHE_DIR is "off" or no home is known.
  static std::string defaultDirectory();

  explicit CompiledObjectCache(std::string directory, uint64_t maxBytes = uint64_t{512} << 20);

  bool enabled() const { return !dir_.empty(); }
  const std::string& directory() const { return dir_; }
  // key: a hex digest (only [0-9a-f] are accepted, so a key can never name another path).
  std::optional<CachedObject> load(const std::string& key) const;
  // Best effort: a full disk or a read-only directory leaves the cache as it was.
  void store(const std::string& key, const CachedObject& entry) const;

  static std::string encode(const CachedObject& entry);
  static std::optional<CachedObject> decode(const std::string& bytes);

 private:
  std::string pathOf(const std::string& key) const;
  void trim() const;
  std::string dir_;
  uint64_t maxBytes_;
};

}  // namespace fusebox
