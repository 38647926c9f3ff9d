// What the registry knows about one torch-level op: its inputs, attributes with defaults,
// its kind (for views and stats) and its shape/dtype inference rule.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attr.h"
#include "core/ir/graph.h"

namespace fusebox {

enum class OpKind { Elementwise, Reduction, Matmul, Conv, Norm, Pool, View, Loss, Creation, Random };
const char* opKindName(OpKind k);

struct InputSpec {
  std::string name;
  bool optional = false;  // only trailing inputs may be optional
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<Attr> defaultValue;  // nullopt: the attribute is required
};

// Typed access to normalized attributes (defaults filled and kinds checked by normalizeAttrs,
// so the getters cannot fail). Shared by inference rules and interpreter kernels.
struct AttrReader {
  const AttrMap& attrs;

  int64_t i(const std::string& n) const { return std::get<int64_t>(attrs.at(n)); }
  double f(const std::string& n) const { return std::get<double>(attrs.at(n)); }
  bool b(const std::string& n) const { return std::get<bool>(attrs.at(n)); }
  const std::string& s(const std::string& n) const { return std::get<std::string>(attrs.at(n)); }
  const std::vector<int64_t>& ints(const std::string& n) const {
    return std::get<std::vector<int64_t>>(attrs.at(n));
  }
  const Shape& shape(const std::string& n) const { return std::get<Shape>(attrs.at(n)); }
  const Dim& dim(const std::string& n) const { return std::get<Dim>(attrs.at(n)); }
};

// Arguments handed to an inference rule.
struct InferCall : AttrReader {
  const std::string& op;
  const std::vector<TensorType>& inputs;

  InferCall(const std::string& op, const std::vector<TensorType>& inputs, const AttrMap& attrs)
      : AttrReader{attrs}, op(op), inputs(inputs) {}
};

using InferFn = std::function<std::vector<TensorType>(const InferCall&)>;

struct OpSchema {
  std::string name;
  OpKind kind;
  std::vector<InputSpec> inputs;
  bool variadic = false;  // the single input spec repeats (cat)
  std::vector<AttrSpec> attrs;
  InferFn infer;
  std::string summary;  // one line: what the op computes
  bool isPrim = false;  // member of the closed prim set of stage 3 (names start with "prims.")

  size_t minInputs() const;
  size_t maxInputs() const;  // SIZE_MAX when variadic
};

}  // namespace fusebox
