// The mapping of ONNX nodes onto registry ops (opset-aware), used by the ONNX loader.
// onnx_ops.cpp dispatches a node: constants (Constant, Shape, Size, ConstantOfShape, Range, EyeLike)
// and nodes whose inputs are all constants are evaluated at import time (by the reference
// interpreter), the rest become registry ops through the importers of onnx_ops_math.cpp
// (elementwise, activations, reductions), onnx_ops_tensor.cpp (shapes and data movement) and
// onnx_ops_nn.cpp (convolution, pooling, normalization, losses).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/frontend/onnx/onnx_proto.h"
#include "core/interp/tensor.h"
#include "core/ir/checked_math.h"
#include "core/ir/graph.h"
#include "core/ops/graph_builder.h"


namespace fusebox {

// An op, attribute or input form that Fusebox does not import (the loader adds node and opset).
class OnnxUnsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A constant input computed at run time (the loader adds node and opset and, where it is a
// model input, rethrows it as OnnxInputNeededAtImport naming that input).
class OnnxNeedsConstant : public OnnxUnsupported {
public:
  OnnxNeedsConstant(const std::string& message, std::string valueName) : OnnxUnsupported(message), value(std::move(valueName)) {}
  std::string value;
};

// The most elements a tensor read from a file may have, and the most a constant folded at import
// time may have (larger ones stay ops of the graph): a corrupt file cannot make the importer
// allocate without bound.
constexpr int64_t kMaxImportedElements = int64_t{1} << 31;
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

struct OnnxContext {
  Graph& graph;
  GraphBuilder builder;
  std::map<std::string, ValueId> values;     // ONNX value name -> graph value
  // initializers, Constant outputs and folded values; shared with the param inputs made of them
  // (OnnxContext::value), so that a 500 MB model's weights are held once
  std::map<std::string, std::shared_ptr<const Tensor>> constants;
  int64_t opset = 0;
  std::string file;
  int madeConstants = 0;                      // names the constants the importers build
  int64_t constantBytes = 0;                  // held by `constants`, against the memory budget
  // The model's weights: initializers (and the TorchScript exporter's Identity copies of them)
  // that are no batch-norm statistics. Every other constant a graph uses is a param that a
  // training step does not differentiate (GraphInput::trainable).
  std::set<std::string> weights{};
  // ONNX element types the importer keeps track of where DTypes merge them (uint8 and int8 are
  // both i32): graph inputs, initializers, Constants, Cast and Identity outputs. Quantization
  // saturates to the zero point's type.
  std::map<std::string, int> elemTypes{};

  // Stores a constant under `name` after checking the memory budget (--max-memory) for every
  // constant held so far: many large initializers or folded values cannot add up without bound.
  void keepConstant(const std::string& name, Tensor t);

  // The graph value of an ONNX name; a constant becomes a param input (its values in the input's
  // InitSpec) the first time it is used.
  ValueId value(const std::string& name);
  // The value of a constant input (a Reshape shape, Slice starts, ...), or OnnxUnsupported.
  const Tensor& constant(const std::string& name, const char* what);
  // A tensor the importer builds (a mask, an index table) as a param of the graph.
  ValueId constantValue(Tensor t);
  // Throws OnnxUnsupported before the importer builds a table of `sizes` with more than
  // kMaxFoldedElements elements.
  static void checkBuildable(const std::vector<int64_t>& sizes, const std::string& what);
};

// One node being imported: its inputs, attributes and emit helpers.
struct OnnxNode {
  OnnxContext& cx;
  const proto::NodeProto& n;

  ValueId in(int i);
  bool has(int i) const;  // input i is given (not missing or empty)
  std::vector<int64_t> intsInput(int i, const char* what);  // a constant integer input
  const Tensor& constantInput(int i, const char* what);     // a constant input (throws when missing)
  // Input i's type without making a constant input a graph input (Shape, Size, EyeLike read only this).
  TensorType inType(int i) const;
  const Shape& shape(ValueId v) const { return cx.graph.type(v).shape; }
  // Concrete sizes (symbolic shapes are not imported: OnnxUnsupported).
  static std::vector<int64_t> sizesOf(const Shape& s);
  std::vector<int64_t> sizes(ValueId v) const { return sizesOf(shape(v)); }
  DType dtype(ValueId v) const { return cx.graph.type(v).dtype; }
  size_t rank(ValueId v) const { return shape(v).size(); }
  int64_t axis(int64_t a, size_t rank) const;  // negative axes count from the end

  const proto::AttributeProto* attr(const char* name) const;
  int64_t attrInt(const char* name, int64_t fallback) const;
  double attrFloat(const char* name, double fallback) const;
  std::vector<int64_t> attrInts(const char* name, std::vector<int64_t> fallback = {}) const;
  std::string attrString(const char* name, const std::string& fallback) const;

  ValueId emit(const std::string& op, std::vector<ValueId> ins, AttrMap a = {});
  ValueId scalar(double v, DType t);
  ValueId reshape(ValueId x, const std::vector<int64_t>& sizes);
  ValueId cast(ValueId x, DType t);
  // x with `lo` copies of `value` before and `hi` after along dim (negative counts crop).
  ValueId padDim(ValueId x, size_t dim, int64_t lo, int64_t hi, double value);
  // 0, 1, ..., n-1 as a constant of dtype t, shaped to broadcast along `dim` of a rank-`rank` tensor.
  ValueId iota(int64_t n, size_t dim, size_t rank, DType t);
};

using OnnxOutputs = std::vector<ValueId>;
using OnnxImporter = std::function<OnnxOutputs(OnnxNode&)>;
using OnnxImporters = std::map<std::string, OnnxImporter>;

// numelWithin (the element count within a limit, without overflow) is core/ir/checked_math.h.
// The element count of `sizes`, or Error naming `what` when a dim is negative or the count
// exceeds kMaxImportedElements.
int64_t checkedNumel(const std::vector<int64_t>& sizes, const std::string& what);

// Compositions shared by the activation importers and the recurrent layers' activations.
ValueId onnxSoftplus(OnnxNode& c, ValueId x);              // relu(x) + log(1 + exp(-|x|))
ValueId onnxElu(OnnxNode& c, ValueId x, double alpha);     // x > 0 ? x : alpha * (e^x - 1)
ValueId onnxClamp(OnnxNode& c, ValueId x, double lo, double hi);

// data.shape[:axis] + idx.shape + data.shape[axis+1:]: data's entries at the (non-negative)
// integer indices idx along axis, as ONNX's Gather (through the embedding op, so it differentiates).
ValueId onnxGatherAlong(OnnxNode& c, ValueId data, size_t axis, ValueId idx);
// x's slices at constant `positions` along axis (an empty tensor when there are none).
ValueId onnxGatherPositions(OnnxNode& c, ValueId x, size_t axis, const std::vector<double>& positions);

// out[.., j, ..] = data[.., idx[.., j, ..], ..] along axis (ONNX's GatherElements; negative
// indices count from the end), idx the shape of data outside the axis.
ValueId onnxGatherElements(OnnxNode& c, ValueId data, ValueId idx, size_t axis);

void addMathImporters(OnnxImporters& m);
void addRecurrentImporters(OnnxImporters& m);
void addResizeImporters(OnnxImporters& m);
void addWindowImporters(OnnxImporters& m);
void addIndexImporters(OnnxImporters& m);
void addEinsumImporters(OnnxImporters& m);
void addTrainingImporters(OnnxImporters& m);
void addQuantizationImporters(OnnxImporters& m);
void addSelectionImporters(OnnxImporters& m);
void addSpectralImporters(OnnxImporters& m);
void addGridSampleImporters(OnnxImporters& m);

// The convolution of x [N, C, spatial...] by w [M, C/group, kernel...] with the node's Conv
// attributes (pads, strides, dilations, group, auto_pad): Conv and the quantized convolutions.
ValueId onnxConvolution(OnnxNode& c, ValueId x, ValueId w, std::optional<ValueId> bias);  // keyed "ai.onnx.preview.training:Adam", ...

// The ONNX domains whose ops import: the default one ("" or "ai.onnx") and the optimizers'.
inline constexpr const char* kOnnxTrainingDomain = "ai.onnx.preview.training";
bool isDefaultOnnxDomain(const std::string& domain);
// The importers' key of a node: its op type, prefixed "domain:" outside the default domain.
std::string onnxOpKey(const proto::NodeProto& n);
void addTensorImporters(OnnxImporters& m);
void addNnImporters(OnnxImporters& m);

void importNode(OnnxContext& cx, const proto::NodeProto& n);
// An onnx.TensorProto's values (raw or typed fields; f32/f64/f16/bf16, signed and unsigned ints, bool).
Tensor onnxTensorOf(const proto::TensorProto& t, const std::string& where);
// The Fusebox dtype an ONNX element type imports as: 8- and 16-bit ints widen to i32 and unsigned
// 32/64-bit ints to i64 (values are kept; wraparound of the narrow type is not modeled).
DType onnxDType(int onnxType, const std::string& where);

}  // namespace fusebox
