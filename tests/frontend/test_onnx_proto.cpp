// The ONNX wire-format reader and writer (core/frontend/onnx/onnx_proto.h): what the writer
// writes reads back field for field; both encodings protobuf allows for repeated scalars read the
// same; bytes that are not the format (truncated, overlong, nested without end, a field of the
// wrong wire type) are a ProtoError giving the byte and the field, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/frontend/onnx/onnx_proto.h"
#include "frontend/onnx_builder.h"

using namespace fusebox;

namespace {

std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) s.push_back(static_cast<char>(v | 0x80)), v >>= 7;
  s.push_back(static_cast<char>(v));
  return s;
}
std::string key(int field, int wire) { return varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
std::string lengthDelimited(int field, const std::string& body) { return key(field, 2) + varint(body.size()) + body; }

// The ProtoError message of parsing `bytes` as a model, and where it failed.
std::pair<std::string, size_t> modelError(const std::string& bytes) {
  try {
    proto::parseModel(bytes);
  } catch (const proto::ProtoError& e) {
    return {e.what(), e.offset};
  }
  return {"", 0};
}

}  // namespace

TEST(OnnxProto, WhatTheWriterWritesReadsBack) {
  proto::ModelProto m = test::onnxModel(18);
  m.producerName = "pytorch";
  m.opsetImports.push_back({"ai.onnx.preview.training", 1});
  proto::GraphProto& g = m.graph;
  g.name = "main";
  g.inputs = {test::onnxTensorInfo("x", proto::FLOAT, {2, 1, 7})};
  g.inputs[0].dims.push_back({false, 0, "batch"});
  proto::TensorProto w = test::onnxFloats("w", {3}, {1.5f, -0.0f, 3e-39f});  // a negative zero and a denormal survive
  w.int64Data = {-1, int64_t{1} << 62};
  w.int32Data = {-7, 65535};
  w.doubleData = {0.1, -2.5};
  w.uint64Data = {~uint64_t{0}};
  w.rawData = std::string("\0\1\xff", 3);
  g.initializers.push_back(w);
  proto::NodeProto& n = test::addOnnxNode(g, "Conv", {"x", "", "w"}, {"y", "z"}, "/layer1/Conv");
  n.domain = "ai.onnx";
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', 'layer1']"}};
  n.attributes.push_back(test::onnxIntAttr("group", -3));
  proto::AttributeProto f;
  f.name = "alphas";
  f.type = proto::ATTR_FLOATS;
  f.floats = {0.25f, -1};
  f.strings = {"tanh", ""};
  f.f = -0.5f;
  f.s = "text";
  n.attributes.push_back(f);
  proto::AttributeProto body;
  body.name = "then_branch";
  body.type = proto::ATTR_GRAPH;
  body.g = std::make_shared<proto::GraphProto>();
  body.g->name = "inner";
  test::addOnnxNode(*body.g, "Relu", {"x"}, {"r"});
  n.attributes.push_back(body);
  g.outputs = {test::onnxName("y")};

  proto::ModelProto back = proto::parseModel(proto::serialize(m));
  EXPECT_EQ(back.irVersion, 8);
  EXPECT_EQ(back.producerName, "pytorch");
  ASSERT_EQ(back.opsetImports.size(), 2u);
  EXPECT_EQ(back.opsetImports[0].version, 18);
  EXPECT_EQ(back.opsetImports[1].domain, "ai.onnx.preview.training");
  const proto::GraphProto& bg = back.graph;
  EXPECT_EQ(bg.name, "main");
  ASSERT_EQ(bg.inputs.size(), 1u);
  EXPECT_TRUE(bg.inputs[0].isTensor);
  EXPECT_EQ(bg.inputs[0].elemType, proto::FLOAT);
  ASSERT_EQ(bg.inputs[0].dims.size(), 4u);
  EXPECT_EQ(bg.inputs[0].dims[1].value, 1);
  EXPECT_TRUE(bg.inputs[0].dims[1].hasValue);
  EXPECT_FALSE(bg.inputs[0].dims[3].hasValue);
  EXPECT_EQ(bg.inputs[0].dims[3].param, "batch");
  ASSERT_EQ(bg.initializers.size(), 1u);
  const proto::TensorProto& bw = bg.initializers[0];
  EXPECT_EQ(bw.dims, w.dims);
  EXPECT_EQ(bw.dataType, proto::FLOAT);
  ASSERT_EQ(bw.floatData.size(), 3u);
  EXPECT_TRUE(std::signbit(bw.floatData[1]));
  EXPECT_EQ(bw.floatData[2], 3e-39f);
  EXPECT_EQ(bw.int64Data, w.int64Data);
  EXPECT_EQ(bw.int32Data, w.int32Data);
  EXPECT_EQ(bw.doubleData, w.doubleData);
  EXPECT_EQ(bw.uint64Data, w.uint64Data);
  EXPECT_EQ(bw.rawData, w.rawData);
  ASSERT_EQ(bg.nodes.size(), 1u);
  const proto::NodeProto& bn = bg.nodes[0];
  EXPECT_EQ(bn.inputs, (std::vector<std::string>{"x", "", "w"}));  // an empty (missing) input keeps its slot
  EXPECT_EQ(bn.outputs, (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(bn.opType, "Conv");
  EXPECT_EQ(bn.domain, "ai.onnx");
  EXPECT_EQ(bn.name, "/layer1/Conv");
  EXPECT_EQ(bn.metadata, n.metadata);
  ASSERT_EQ(bn.attributes.size(), 3u);
  EXPECT_EQ(bn.attributes[0].i, -3);
  EXPECT_EQ(bn.attributes[0].type, proto::ATTR_INT);
  EXPECT_EQ(bn.attributes[1].floats, f.floats);
  EXPECT_EQ(bn.attributes[1].strings, f.strings);
  EXPECT_EQ(bn.attributes[1].f, -0.5f);
  EXPECT_EQ(bn.attributes[1].s, "text");
  ASSERT_TRUE(bn.attributes[2].g);
  EXPECT_EQ(bn.attributes[2].g->name, "inner");
  ASSERT_EQ(bn.attributes[2].g->nodes.size(), 1u);
  EXPECT_EQ(bn.attributes[2].g->nodes[0].opType, "Relu");
  EXPECT_FALSE(bg.outputs[0].isTensor);
  EXPECT_EQ(proto::serialize(back), proto::serialize(m));
}

// Protobuf writes repeated scalars one per field (proto2's default, the TorchScript exporter's
// dims) or packed; a reader must take both, mixed, and unknown fields of every wire type.
TEST(OnnxProto, RepeatedScalarsReadPackedOrNotAndUnknownFieldsAreSkipped) {
  std::string tensor = key(1, 0) + varint(3) + lengthDelimited(1, varint(5) + varint(1)) + key(1, 0) + varint(~uint64_t{0}) +  // dims 3, 5, 1, -1
                       key(2, 0) + varint(~uint64_t{0} - 5) +  // data_type: an int32 written as a sign-extended varint (-6)
                       key(4, 5) + std::string("\0\0\x80\x3f", 4) +  // float_data 1.0, unpacked
                       key(99, 0) + varint(12345) + key(98, 1) + std::string(8, 'x') + key(97, 5) + std::string(4, 'y') +
                       lengthDelimited(96, "skipped") + key(8, 2) + varint(1) + "t";
  proto::TensorProto t = proto::parseTensor(tensor);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{3, 5, 1, -1}));
  EXPECT_EQ(t.dataType, -6);
  EXPECT_EQ(t.floatData, (std::vector<float>{1.0f}));
  EXPECT_EQ(t.name, "t");
  EXPECT_STREQ(proto::dataTypeName(proto::BFLOAT16), "BFLOAT16");
  EXPECT_STREQ(proto::dataTypeName(-6), "unknown");
}

TEST(OnnxProto, MalformedBytesAreErrorsNamingTheByteAndField) {
  // a graph (field 7) claiming 100 bytes with 3 left
  auto [past, at] = modelError(key(1, 0) + varint(8) + key(7, 2) + varint(100) + "abc");
  EXPECT_NE(past.find("ModelProto field 7: a length of 100 bytes runs past the end of the message (3 left)"), std::string::npos) << past;
  EXPECT_EQ(at, 2u);
  EXPECT_NE(modelError(key(1, 0) + "\x80\x80").first.find("a varint runs past the end"), std::string::npos);
  EXPECT_NE(modelError(key(1, 0) + std::string(10, '\xff') + "\x01").first.find("longer than 10 bytes"), std::string::npos);
  // ir_version (a varint) written as a string: the field's wire type is checked
  EXPECT_NE(modelError(lengthDelimited(1, "8")).first.find("ModelProto field 1: has wire type 2, expected 0"), std::string::npos);
  EXPECT_NE(modelError(key(5, 3)).first.find("groups are not used"), std::string::npos);
  EXPECT_NE(modelError(std::string("\x00", 1)).first.find("field number 0"), std::string::npos);
  // a node (GraphProto field 1) whose op_type's length runs past the node, not only the file
  std::string node = key(4, 2) + varint(9) + "Relu";
  auto [inner, innerAt] = modelError(lengthDelimited(7, lengthDelimited(1, node)));
  EXPECT_NE(inner.find("NodeProto field 4: a length of 9 bytes"), std::string::npos) << inner;
  EXPECT_EQ(innerAt, 4u);  // the file's offset of the node's field, not the node's
  // packed floats that are not whole values
  EXPECT_NE(modelError(lengthDelimited(7, lengthDelimited(5, lengthDelimited(4, "abcde")))).first.find("not whole 4-byte values"),
            std::string::npos);
}

// Subgraphs in attributes nest; a hostile file nesting them without end stops at kMaxNesting with
// an error, not at the end of the stack.
TEST(OnnxProto, NestingIsBounded) {
  auto nested = [](int graphs) {
    std::string g = lengthDelimited(2, "leaf");
    for (int i = 1; i < graphs; ++i) g = lengthDelimited(1, lengthDelimited(5, lengthDelimited(6, g)));  // graph.node.attribute.g
    return lengthDelimited(7, g);
  };
  proto::ModelProto ok = proto::parseModel(nested(20));
  const proto::GraphProto* g = &ok.graph;
  int depth = 1;
  while (!g->nodes.empty()) g = g->nodes[0].attributes[0].g.get(), ++depth;
  EXPECT_EQ(depth, 20);
  EXPECT_EQ(g->name, "leaf");
  EXPECT_NE(modelError(nested(30)).first.find("nested more than 64 deep"), std::string::npos);
  EXPECT_NE(modelError(nested(3000)).first.find("nested more than 64 deep"), std::string::npos);
}
