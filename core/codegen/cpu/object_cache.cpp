#include "core/codegen/cpu/object_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace fusebox {

namespace fs = std::filesystem;

namespace {

// "FBOBJ1\n", then the object's and the IR's byte counts (8 bytes each, little-endian), then both.
constexpr char kMagic[] = "FBOBJ1\n";
constexpr size_t kMagicSize = sizeof kMagic - 1;

void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t getU64(const std::string& in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

bool isHexKey(const std::string& key) {
  return !key.empty() && key.size() <= 128 &&
         std::all_of(key.begin(), key.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::string CompiledObjectCache::defaultDirectory() {
  if (const char* d = std::getenv("FUSEBOX_CACHE_DIR"); d && *d) return std::strcmp(d, "off") == 0 ? "" : std::string(d) + "/cpu";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/fusebox/cpu";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/fusebox/cpu";
  return "";
}

CompiledObjectCache::CompiledObjectCache(std::string directory, uint64_t maxBytes) : dir_(std::move(directory)), maxBytes_(maxBytes) {}

std::string CompiledObjectCache::pathOf(const std::string& key) const { return dir_ + "/" + key + ".fbo"; }

std::string CompiledObjectCache::encode(const CachedObject& e) {
  std::string out(kMagic, kMagicSize);
  putU64(out, e.object.size());
  putU64(out, e.llvmIR.size());
  out += e.object;
  out += e.llvmIR;
  return out;
}

std::optional<CachedObject> CompiledObjectCache::decode(const std::string& bytes) {
  size_t header = kMagicSize + 16;
  if (bytes.size() < header || bytes.compare(0, kMagicSize, kMagic) != 0) return std::nullopt;
  uint64_t objectSize = getU64(bytes, kMagicSize), irSize = getU64(bytes, kMagicSize + 8);
  // Compared without overflow: each size is at most what the file holds.
  uint64_t body = bytes.size() - header;
  if (objectSize == 0 || objectSize > body || irSize != body - objectSize) return std::nullopt;
  return CachedObject{bytes.substr(header, objectSize), bytes.substr(header + objectSize)};
}

std::optional<CachedObject> CompiledObjectCache::load(const std::string& key) const {
  if (!enabled() || !isHexKey(key)) return std::nullopt;
  std::ifstream in(pathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::optional<CachedObject> entry = decode(bytes.str());
  if (entry) {
    std::error_code ec;  // a hit is recent use: trim() removes the oldest first
    fs::last_write_time(pathOf(key), fs::file_time_type::clock::now(), ec);
  }
  return entry;
}

void CompiledObjectCache::store(const std::string& key, const CachedObject& entry) const {
  if (!enabled() || !isHexKey(key)) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace, ec);
  std::string tmp = pathOf(key) + ".tmp" + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    std::string bytes = encode(entry);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, pathOf(key), ec);  // atomic: a concurrent reader sees the old file or the whole new one
  if (ec) fs::remove(tmp, ec);
  trim();
}

void CompiledObjectCache::trim() const {
  struct File {
    fs::path path;
    fs::file_time_type time;
    uint64_t size;
  };
  std::vector<File> files;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".fbo") continue;
    std::error_code e1, e2;
    uint64_t size = it->file_size(e1);
    fs::file_time_type time = it->last_write_time(e2);
    if (e1 || e2) continue;
    files.push_back({it->path(), time, size});
    total += size;
  }
  if (total <= maxBytes_) return;
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.time < b.time; });
  for (const File& f : files) {
    if (total <= maxBytes_) break;
    if (fs::remove(f.path, ec)) total -= f.size;
  }
}

}  // namespace fusebox
