#include "core/frontend/onnx/onnx_proto.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace fusebox::proto {

const char* dataTypeName(int32_t type) {
  static const char* const names[] = {"UNDEFINED",      "FLOAT",      "UINT8",        "INT8",           "UINT16", "INT16",
                                      "INT32",          "INT64",      "STRING",       "BOOL",           "FLOAT16", "DOUBLE",
                                      "UINT32",         "UINT64",     "COMPLEX64",    "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN",
                                      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",        "INT4",   "FLOAT4E2M1"};
  return type >= 0 && type < static_cast<int32_t>(std::size(names)) ? names[type] : "unknown";
}

namespace {

// Protobuf's wire types.
enum Wire : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads one message's fields from bytes [begin, end) of the file that starts at `base`.
class WireReader {
public:
  WireReader(std::string_view bytes, const char* base, const char* message, int depth)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()), base_(base), message_(message), depth_(depth) {
    if (depth > kMaxNesting) fail("messages nested more than " + std::to_string(kMaxNesting) + " deep");
  }

  // The next field's number and wire type; false at the end of the message.
  bool next() {
    if (p_ == end_) return false;
    fieldStart_ = p_;
    uint64_t key = varint();
    field_ = key >> 3;
    wire_ = static_cast<int>(key & 7);
    if (field_ == 0 || field_ > 0x1fffffff) fail("field number " + std::to_string(field_));
    return true;
  }
  uint64_t field() const { return field_; }

  int64_t int64() { return static_cast<int64_t>(scalar(kVarint)); }
  int32_t int32() { return static_cast<int32_t>(scalar(kVarint)); }  // protobuf truncates to the low 32 bits
  float float32() {
    expect(kFixed32);
    uint32_t bits = static_cast<uint32_t>(fixed(4));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  std::string string() { return std::string(bytes()); }
  // A nested message's reader.
  WireReader message(const char* name) { return WireReader(bytes(), base_, name, depth_ + 1); }

  // A repeated scalar field, packed (one length-delimited run) or not (one value per field).
  template <class T>
  void repeated(std::vector<T>& out) {
    constexpr int wire = std::is_floating_point_v<T> ? (sizeof(T) == 4 ? kFixed32 : kFixed64) : kVarint;
    if (wire_ != kLengthDelimited) {
      out.push_back(one<T>(wire));
      return;
    }
    WireReader run(bytes(), base_, message_, depth_);
    run.wire_ = wire;
    run.field_ = field_;
    if constexpr (wire != kVarint) {
      size_t left = static_cast<size_t>(run.end_ - run.p_);
      if (left % sizeof(T)) run.fail("a packed run of " + std::to_string(left) + " bytes is not whole " + std::to_string(sizeof(T)) + "-byte values");
      out.reserve(out.size() + left / sizeof(T));
    }
    while (run.p_ != run.end_) out.push_back(run.one<T>(wire));
  }

  // Steps over a field this reader does not keep.
  void skip() {
    switch (wire_) {
      case kVarint: varint(); break;
      case kFixed64: fixed(8); break;
      case kFixed32: fixed(4); break;
      case kLengthDelimited: bytes(); break;
      default: fail("wire type " + std::to_string(wire_) + " (groups are not used by ONNX)");
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    const char* at = fieldStart_ ? fieldStart_ : p_;
    throw ProtoError(std::string(message_) + (field_ ? " field " + std::to_string(field_) : std::string()) + ": " + what,
                     static_cast<size_t>(at - base_));
  }

private:
  template <class T>
  T one(int wire) {
    if constexpr (std::is_same_v<T, float>) {
      return float32();
    } else if constexpr (std::is_same_v<T, double>) {
      expect(kFixed64);
      uint64_t bits = fixed(8);
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    } else {
      return static_cast<T>(scalar(wire));
    }
  }

  uint64_t scalar(int wire) {
    expect(wire);
    return varint();
  }

  void expect(int wire) const {
    if (wire_ != wire) fail("has wire type " + std::to_string(wire_) + ", expected " + std::to_string(wire));
  }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) fail("a varint runs past the end of the message");
      uint8_t b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("a varint longer than 10 bytes");
  }

  uint64_t fixed(int n) {
    if (end_ - p_ < n) fail("a " + std::to_string(n) + "-byte value runs past the end of the message");
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += n;
    return v;
  }

  std::string_view bytes() {
    expect(kLengthDelimited);
    uint64_t n = varint();
    if (n > static_cast<uint64_t>(end_ - p_))
      fail("a length of " + std::to_string(n) + " bytes runs past the end of the message (" + std::to_string(end_ - p_) + " left)");
    std::string_view s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }

  const char* p_;
  const char* end_;
  const char* base_;
  const char* message_;
  int depth_;
  const char* fieldStart_ = nullptr;
  uint64_t field_ = 0;
  int wire_ = 0;
};

void read(WireReader r, GraphProto& g);

void read(WireReader r, TensorProto& t) {
  while (r.next()) switch (r.field()) {
      case 1: r.repeated(t.dims); break;
      case 2: t.dataType = r.int32(); break;
      case 4: r.repeated(t.floatData); break;
      case 5: r.repeated(t.int32Data); break;
      case 7: r.repeated(t.int64Data); break;
      case 8: t.name = r.string(); break;
      case 9: t.rawData = r.string(); break;
      case 10: r.repeated(t.doubleData); break;
      case 11: r.repeated(t.uint64Data); break;
      case 14: t.dataLocation = r.int32(); break;
      default: r.skip();
    }
}

void read(WireReader r, AttributeProto& a) {
  while (r.next()) switch (r.field()) {
      case 1: a.name = r.string(); break;
      case 2: a.f = r.float32(); break;
      case 3: a.i = r.int64(); break;
      case 4: a.s = r.string(); break;
      case 5: read(r.message("TensorProto"), a.t); break;
      case 6:
        if (!a.g) a.g = std::make_shared<GraphProto>();
        read(r.message("GraphProto"), *a.g);
        break;
      case 7: r.repeated(a.floats); break;
      case 8: r.repeated(a.ints); break;
      case 9: a.strings.push_back(r.string()); break;
      case 11: read(r.message("GraphProto"), a.graphs.emplace_back()); break;
      case 20: a.type = r.int32(); break;
      default: r.skip();
    }
}

void read(WireReader r, std::pair<std::string, std::string>& entry) {
  while (r.next()) switch (r.field()) {
      case 1: entry.first = r.string(); break;
      case 2: entry.second = r.string(); break;
      default: r.skip();
    }
}

void read(WireReader r, NodeProto& n) {
  while (r.next()) switch (r.field()) {
      case 1: n.inputs.push_back(r.string()); break;
      case 2: n.outputs.push_back(r.string()); break;
      case 3: n.name = r.string(); break;
      case 4: n.opType = r.string(); break;
      case 5: read(r.message("AttributeProto"), n.attributes.emplace_back()); break;
      case 7: n.domain = r.string(); break;
      case 9: read(r.message("StringStringEntryProto"), n.metadata.emplace_back()); break;
      default: r.skip();
    }
}

void read(WireReader r, Dimension& d) {
  while (r.next()) switch (r.field()) {
      case 1: d.value = r.int64(), d.hasValue = true, d.param.clear(); break;  // a oneof: the last one set wins
      case 2: d.param = r.string(), d.hasValue = false; break;
      default: r.skip();
    }
}

void readShape(WireReader r, ValueInfoProto& v) {
  while (r.next()) switch (r.field()) {
      case 1: read(r.message("TensorShapeProto.Dimension"), v.dims.emplace_back()); break;
      default: r.skip();
    }
}

void readTensorType(WireReader r, ValueInfoProto& v) {
  while (r.next()) switch (r.field()) {
      case 1: v.elemType = r.int32(); break;
      case 2: readShape(r.message("TensorShapeProto"), v); break;
      default: r.skip();
    }
}

void readType(WireReader r, ValueInfoProto& v) {
  while (r.next()) switch (r.field()) {
      case 1:
        v.isTensor = true;
        readTensorType(r.message("TypeProto.Tensor"), v);
        break;
      default: r.skip();  // sequence, map, optional or sparse tensor types: isTensor stays false
    }
}

void read(WireReader r, ValueInfoProto& v) {
  while (r.next()) switch (r.field()) {
      case 1: v.name = r.string(); break;
      case 2: readType(r.message("TypeProto"), v); break;
      default: r.skip();
    }
}

void read(WireReader r, GraphProto& g) {
  while (r.next()) switch (r.field()) {
      case 1: read(r.message("NodeProto"), g.nodes.emplace_back()); break;
      case 2: g.name = r.string(); break;
      case 5: read(r.message("TensorProto"), g.initializers.emplace_back()); break;
      case 11: read(r.message("ValueInfoProto"), g.inputs.emplace_back()); break;
      case 12: read(r.message("ValueInfoProto"), g.outputs.emplace_back()); break;
      case 13: read(r.message("ValueInfoProto"), g.valueInfo.emplace_back()); break;
      case 15: r.skip(), ++g.sparseInitializers; break;
      default: r.skip();
    }
}

void read(WireReader r, OperatorSetId& o) {
  while (r.next()) switch (r.field()) {
      case 1: o.domain = r.string(); break;
      case 2: o.version = r.int64(); break;
      default: r.skip();
    }
}

void read(WireReader r, ModelProto& m) {
  while (r.next()) switch (r.field()) {
      case 1: m.irVersion = r.int64(); break;
      case 2: m.producerName = r.string(); break;
      case 7: read(r.message("GraphProto"), m.graph); break;
      case 8: read(r.message("OperatorSetIdProto"), m.opsetImports.emplace_back()); break;
      default: r.skip();
    }
}

// The writer: fields in number order, repeated scalars packed, empty strings and zeros left out
// except where presence matters (a dim's value).
class WireWriter {
public:
  std::string out;

  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void key(int field, int wire) { varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
  void int64(int field, int64_t v, bool always = false) {
    if (!v && !always) return;
    key(field, kVarint);
    varint(static_cast<uint64_t>(v));
  }
  void float32(int field, float v) {
    if (v == 0 && !std::signbit(v)) return;
    key(field, kFixed32);
    fixedBytes(&v, 4);
  }
  void string(int field, std::string_view s, bool always = false) {
    if (s.empty() && !always) return;
    key(field, kLengthDelimited);
    varint(s.size());
    out.append(s);
  }
  template <class T>
  void packed(int field, const std::vector<T>& v) {
    if (v.empty()) return;
    WireWriter run;
    for (T x : v) {
      if constexpr (std::is_floating_point_v<T>) run.fixedBytes(&x, sizeof(T));
      else run.varint(static_cast<uint64_t>(x));
    }
    string(field, run.out, true);
  }
  void fixedBytes(const void* p, size_t n) {  // little-endian hosts only, as everything else here
    out.append(static_cast<const char*>(p), n);
  }
};

std::string write(const GraphProto& g);

std::string write(const TensorProto& t) {
  WireWriter w;
  w.packed(1, t.dims);
  w.int64(2, t.dataType);
  w.packed(4, t.floatData);
  w.packed(5, t.int32Data);
  w.packed(7, t.int64Data);
  w.string(8, t.name);
  w.string(9, t.rawData);
  w.packed(10, t.doubleData);
  w.packed(11, t.uint64Data);
  w.int64(14, t.dataLocation);
  return w.out;
}

std::string write(const AttributeProto& a) {
  WireWriter w;
  w.string(1, a.name);
  w.float32(2, a.f);
  w.int64(3, a.i);
  w.string(4, a.s);
  if (a.type == ATTR_TENSOR) w.string(5, write(a.t), true);
  if (a.g) w.string(6, write(*a.g), true);
  w.packed(7, a.floats);
  w.packed(8, a.ints);
  for (const std::string& s : a.strings) w.string(9, s, true);
  for (const GraphProto& g : a.graphs) w.string(11, write(g), true);
  w.int64(20, a.type);
  return w.out;
}

std::string write(const NodeProto& n) {
  WireWriter w;
  for (const std::string& s : n.inputs) w.string(1, s, true);
  for (const std::string& s : n.outputs) w.string(2, s, true);
  w.string(3, n.name);
  w.string(4, n.opType);
  for (const AttributeProto& a : n.attributes) w.string(5, write(a), true);
  w.string(7, n.domain);
  for (const auto& [k, v] : n.metadata) {
    WireWriter e;
    e.string(1, k);
    e.string(2, v);
    w.string(9, e.out, true);
  }
  return w.out;
}

std::string write(const ValueInfoProto& v) {
  WireWriter shape;
  for (const Dimension& d : v.dims) {
    WireWriter dim;
    if (d.hasValue) dim.int64(1, d.value, true);
    else dim.string(2, d.param);
    shape.string(1, dim.out, true);
  }
  WireWriter tensor;
  tensor.int64(1, v.elemType);
  tensor.string(2, shape.out, true);
  WireWriter w;
  w.string(1, v.name);
  if (v.isTensor) {
    WireWriter type;
    type.string(1, tensor.out, true);
    w.string(2, type.out, true);
  }
  return w.out;
}

std::string write(const GraphProto& g) {
  WireWriter w;
  for (const NodeProto& n : g.nodes) w.string(1, write(n), true);
  w.string(2, g.name);
  for (const TensorProto& t : g.initializers) w.string(5, write(t), true);
  for (const ValueInfoProto& v : g.inputs) w.string(11, write(v), true);
  for (const ValueInfoProto& v : g.outputs) w.string(12, write(v), true);
  for (const ValueInfoProto& v : g.valueInfo) w.string(13, write(v), true);
  return w.out;
}

}  // namespace

ModelProto parseModel(std::string_view bytes) {
  ModelProto m;
  read(WireReader(bytes, bytes.data(), "ModelProto", 0), m);
  return m;
}

TensorProto parseTensor(std::string_view bytes) {
  TensorProto t;
  read(WireReader(bytes, bytes.data(), "TensorProto", 0), t);
  return t;
}

std::string serialize(const ModelProto& m) {
  WireWriter w;
  w.int64(1, m.irVersion);
  w.string(2, m.producerName);
  w.string(7, write(m.graph), true);
  for (const OperatorSetId& o : m.opsetImports) {
    WireWriter e;
    e.string(1, o.domain);
    e.int64(2, o.version);
    w.string(8, e.out, true);
  }
  return w.out;
}

std::string serialize(const TensorProto& t) { return write(t); }

}  // namespace fusebox::proto
