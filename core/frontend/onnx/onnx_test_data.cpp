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

bool isRead(const Graph& g, ValueId v) {
  for (const Node& n : g.nodes())
    if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) return true;
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

// Every graph input of `g` for the data set `set`: params from their imported values, the model
// input names[K] from input_K.pb. `exact`: a file whose shape is not its input's is an error;
// otherwise an input whose values nothing reads (CastLike's `like` once imported) is fed in its
// declared shape, as some of ONNX's own cases give it another (a [1] tensor for a declared [3, 4]).
std::vector<Tensor> dataSetInputs(const Graph& g, const std::vector<std::string>& names, const std::string& set, bool exact) {
  std::vector<Tensor> inputs;
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    if (in.role == InputRole::Param) {
      inputs.push_back(makeTensor(v.type, in.init, 0));
      continue;
    }
    size_t k = static_cast<size_t>(std::find(names.begin(), names.end(), v.name) - names.begin());
    if (k >= names.size()) throw Error(set + ": no input file for input '" + v.name + "'");
    std::string file = inputFile(set, k);
    if (!std::filesystem::exists(file)) throw Error(set + ": no input_" + std::to_string(k) + ".pb for input '" + v.name + "'");
    Tensor t = loadOnnxTensor(file, v.type.dtype);
    bool declared = isConcrete(v.type.shape) && t.sizes == concreteSizes(v.type.shape);
    if (!declared && exact)
      throw Error(file + ": a " + TensorType{t.dtype, shapeOf(t.sizes)}.str() + " for input '" + v.name + "' of " + v.type.str());
    if (!declared && isConcrete(v.type.shape) && !isRead(g, in.value)) t = Tensor(v.type.dtype, concreteSizes(v.type.shape));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

std::vector<Tensor> onnxDataSetInputs(const OnnxModel& m, const std::string& set) {
  return dataSetInputs(m.graph, m.inputNames, set, false);
}

OnnxDataSet onnxDataSetFor(const Graph& g, const std::string& set) {
  std::vector<std::string> names;  // the K-th model input is the K-th input that is no param
  for (const GraphInput& in : g.inputs())
    if (in.role != InputRole::Param) names.push_back(g.value(in.value).name);
  OnnxDataSet d;
  d.inputs = dataSetInputs(g, names, set, true);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    std::string file = (std::filesystem::path(set) / ("output_" + std::to_string(i) + ".pb")).string();
    if (!std::filesystem::exists(file)) break;
    d.outputs.push_back(loadOnnxTensor(file, g.type(g.outputs()[i]).dtype));
  }
  return d;
}

OnnxModel loadOnnxSpecialized(const std::string& modelPath, const std::string& set, OnnxBindings* bound) {
  OnnxBindings bind;
  std::vector<std::string> names = onnxInputNames(modelPath);
  for (;;) {
    try {
      OnnxModel m = loadOnnx(modelPath, bind);
      if (bound) *bound = bind;
      return m;
    } catch (const OnnxInputNeededAtImport& e) {
      size_t k = static_cast<size_t>(std::find(names.begin(), names.end(), e.input) - names.begin());
      if (bind.count(e.input) || k >= names.size() || !std::filesystem::exists(inputFile(set, k))) throw;
      bind[e.input] = loadOnnxTensor(inputFile(set, k));  // each input once: at most names.size() rounds
    }
  }
}

}  // namespace fusebox
