// The on-disk cache of compiled CPU modules: entries round-trip, anything else is a miss, the
// directory stays under its bound, and a second compile of a source is served from disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/codegen/cpu/jit_compiler.h"
#include "core/codegen/cpu/object_cache.h"

namespace fusebox {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("fusebox_object_cache_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

const std::string kKey = "0123456789abcdef0123456789abcdef";

TEST(CompiledObjectCache, EntriesRoundTrip) {
  CompiledObjectCache cache(freshDir("roundtrip").string());
  CachedObject e{std::string("\x7f" "ELF\0\1\2", 7), "define void @f() {}\n"};
  cache.store(kKey, e);
  std::optional<CachedObject> back = cache.load(kKey);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->object, e.object);
  EXPECT_EQ(back->llvmIR, e.llvmIR);
  EXPECT_FALSE(cache.load("fedcba9876543210fedcba9876543210"));
  fs::remove_all(cache.directory());
}

TEST(CompiledObjectCache, DamagedOrForeignFilesAreMisses) {
  std::string good = CompiledObjectCache::encode({"object bytes", "ir"});
  ASSERT_TRUE(CompiledObjectCache::decode(good));
  for (size_t cut = 0; cut < good.size(); ++cut) EXPECT_FALSE(CompiledObjectCache::decode(good.substr(0, cut))) << cut;
  EXPECT_FALSE(CompiledObjectCache::decode(good + "x"));
  std::string huge = good;
  huge[7] = '\xff';  // the object's size claims more than the file holds
  for (int i = 8; i < 15; ++i) huge[i] = '\xff';
  EXPECT_FALSE(CompiledObjectCache::decode(huge));
  EXPECT_FALSE(CompiledObjectCache::decode("FBOBJ2\n" + good.substr(7)));
  EXPECT_FALSE(CompiledObjectCache::decode(CompiledObjectCache::encode({"", "ir only"})));

  fs::path dir = freshDir("damaged");
  CompiledObjectCache cache(dir.string());
  cache.store(kKey, {"object", "ir"});
  std::ofstream(dir / (kKey + ".fbo"), std::ios::binary | std::ios::trunc) << good.substr(0, 20);
  EXPECT_FALSE(cache.load(kKey));
  fs::remove_all(dir);
}

TEST(CompiledObjectCache, KeysCannotNameOtherPaths) {
  fs::path dir = freshDir("keys");
  CompiledObjectCache cache(dir.string());
  for (const char* key : {"../escape", "/etc/passwd", "ABCDEF", "", "a b", "x.fbo"}) {
    cache.store(key, {"object", "ir"});
    EXPECT_FALSE(cache.load(key)) << key;
  }
  EXPECT_FALSE(fs::exists(dir.parent_path() / "escape.fbo"));
  EXPECT_TRUE(!fs::exists(dir) || fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(CompiledObjectCache, StaysUnderItsBoundDroppingTheOldest) {
  fs::path dir = freshDir("bound");
  CompiledObjectCache cache(dir.string(), 3000);
  std::string object(1000, 'o');
  for (char c : std::string("abcdef")) {
    cache.store(std::string(32, c), {object, "ir"});
    fs::last_write_time(dir / (std::string(32, c) + ".fbo"), fs::file_time_type::clock::now() - std::chrono::hours('z' - c));
  }
  uint64_t total = 0;
  for (const auto& f : fs::directory_iterator(dir)) total += f.file_size();
  EXPECT_LE(total, 3000u);
  EXPECT_TRUE(cache.load(std::string(32, 'f')));  // the newest stays
  EXPECT_FALSE(cache.load(std::string(32, 'a')));
  fs::remove_all(dir);
}

TEST(CompiledObjectCache, DisabledByTheEnvironment) {
  ::setenv("FUSEBOX_CACHE_DIR", "off", 1);
  EXPECT_EQ(CompiledObjectCache::defaultDirectory(), "");
  ::setenv("FUSEBOX_CACHE_DIR", "/somewhere", 1);
  EXPECT_EQ(CompiledObjectCache::defaultDirectory(), "/somewhere/cpu");
  CompiledObjectCache off("");
  off.store(kKey, {"object", "ir"});
  EXPECT_FALSE(off.load(kKey));
}

}  // namespace
}  // namespace fusebox
