#include "core/frontend/onnx/onnx_test_data.h"

#include <algorithm>
#include <filesystem>

#include "core/interp/interpreter.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

std::string inputFile(const std::string& set, size_t k) {
  return (std::filesystem::path(set) / ("input_" + std::to_string(k) + ".pb")).string();
}

}  // namespace

std::vector<Tensor> onnxDataSetInputs(const OnnxModel& m, const std::string& set) {
  std::vector<Tensor> inputs;
  for (const GraphInput& in : m.graph.inputs()) {
    const Value& v = m.graph.value(in.value);
    if (in.role == InputRole::Param) {
      inputs.push_back(makeTensor(v.type, in.init, 0));
      continue;
    }
    size_t k = static_cast<size_t>(std::find(m.inputNames.begin(), m.inputNames.end(), v.name) - m.inputNames.begin());
    std::string file = inputFile(set, k);
    if (k >= m.inputNames.size() || !std::filesystem::exists(file)) throw Error(set + ": no input file for input '" + v.name + "'");
    inputs.push_back(loadOnnxTensor(file));
  }
  return inputs;
}

OnnxBindings onnxIntegerInputs(const std::string& modelPath, const std::string& set) {
  OnnxBindings bind;
  std::vector<std::string> names = onnxInputNames(modelPath);
  for (size_t k = 0; k < names.size(); ++k) {
    if (!std::filesystem::exists(inputFile(set, k))) break;
    Tensor t = loadOnnxTensor(inputFile(set, k));
    if (isInteger(t.dtype)) bind[names[k]] = std::move(t);
  }
  return bind;
}

}  // namespace fusebox
