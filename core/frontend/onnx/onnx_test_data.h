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
// The integer inputs of `set` by name, to bind at import (loadOnnx(modelPath, bindings)).
OnnxBindings onnxIntegerInputs(const std::string& modelPath, const std::string& set);

}  // namespace fusebox
