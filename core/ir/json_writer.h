// A minimal streaming JSON writer (objects, arrays, strings, numbers, bools) with escaping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fusebox {

class JsonWriter {
public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v);  // non-finite values are written as strings ("inf", "nan")
  JsonWriter& value(bool v);
  JsonWriter& null();

  const std::string& str() const { return out_; }

private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool afterKey_ = false;
};

std::string jsonEscape(std::string_view s);

}  // namespace fusebox
