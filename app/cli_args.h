// A small command-line parser: positionals, --flag, --key value / --key=value, repeated keys.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusebox::cli {

class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class Args {
public:
  // `valued` names options that take a value; `flags` those that do not. Anything else starting
  // with '-' is a UsageError.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& valued, const std::set<std::string>& flags);

  const std::vector<std::string>& positional() const { return positional_; }
  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;  // every occurrence
  std::string valueOr(const std::string& name, const std::string& fallback) const;
  int intValue(const std::string& name, int fallback, int min, int max) const;
  // A size in bytes ("12G", "512M", "1.5GB", "100000"; K/M/G/T are powers of 1024), or nullopt when absent.
  std::optional<int64_t> byteSize(const std::string& name) const;

private:
  std::vector<std::string> positional_;
  std::set<std::string> flags_;
  std::multimap<std::string, std::string> values_;
};

}  // namespace fusebox::cli
