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

}  // namespace fusebox
