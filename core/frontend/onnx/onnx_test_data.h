// ONNX backend test cases, as ONNX ships them (Debian's libonnx-testdata): a folder holding
// model.onnx and test_data_set_N/ folders of input_K.pb and output_K.pb, where K is the position
// of a model input (initializers excluded) or output.
#pragma once

#include <string>
#include <vector>

#include "core/frontend/onnx/onnx_loader.h"

namespace fusebox {

// The graph inputs of `m` for the data set folder `set`, in graph-input order: model inputs from
// input_K.pb, params from the values they were imported with. Throws Error naming a missing file.
std::vector<Tensor> onnxDataSetInputs(const OnnxModel& m, const std::string& set);
// The model specialized to the data set `set`: every input whose values the import needs (a
// Reshape's shape, Resize's scales; OnnxInputNeededAtImport) is bound to the set's values, one
// after the other as the import asks for them. `bound` gets the bindings.
OnnxModel loadOnnxSpecialized(const std::string& modelPath, const std::string& set, OnnxBindings* bound = nullptr);

// A data set for the graph `g` of a model imported without bindings (a traced graph keeps its
// inputs): the graph inputs in order (params from their imported values, the K-th model input
// from input_K.pb) and the expected outputs output_K.pb, as many leading ones as the set has.
// Throws Error naming a missing input file or a shape that is not the input's.
struct OnnxDataSet {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};
OnnxDataSet onnxDataSetFor(const Graph& g, const std::string& set);

}  // namespace fusebox
