// Stage 1: trace a model into a graph of torch-level ops with shapes and dtypes resolved.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/frontend/model.h"
#include "core/ir/graph.h"

namespace fusebox {

struct TraceOptions {
  std::map<std::string, int64_t> dims;  // sizes of symbolic dims, overriding the model's defaults
  bool symbolic = false;                // keep dims symbolic unless given in `dims`
  bool operator==(const TraceOptions&) const = default;
};

// Evaluates the model body: every op call becomes a node (shape-checked by the registry), every
// param a graph input with its initializer. Throws ParseError/ShapeError with file:line:col.
// An imported model (ModelDef::imported) is already a traced graph and is returned as is.
Graph trace(const ModelDef& model, const TraceOptions& options = {});

}  // namespace fusebox
