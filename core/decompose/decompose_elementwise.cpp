// Decompositions of the elementwise ops: the unary and binary tables map one to one onto prims;
// activations, casts, constants and dropout are compositions of them.
#include "core/decompose/decomposer.h"

#include <cmath>

#include "core/ops/binary_math.h"
#include "core/ops/unary_math.h"

namespace fusebox {

void addElementwiseDecompositions(DecompTable& t) {
  for (const UnaryMath& u : unaryMathOps()) t[u.name] = [op = u.name](Decomp& d) { return d.unary(op, d.in(0)); };
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp) t[b.name] = [op = b.name](Decomp& d) { return d.binary(op, d.in(0), d.in(1)); };
  t["relu"] = [](Decomp& d) { return d.withScalar("maximum", d.in(0), 0); };
  t["sigmoid"] = [](Decomp& d) { return d.sigmoid(d.in(0)); };
  t["silu"] = [](Decomp& d) { return d.binary("mul", d.in(0), d.sigmoid(d.in(0))); };
  t["gelu"] = [](Decomp& d) {
    ValueId x = d.in(0);
    ValueId inner;
    if (d.a().s("approximate") == "tanh") {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      ValueId x3 = d.binary("mul", d.binary("mul", x, x), x);
      ValueId poly = d.binary("add", x, d.withScalar("mul", x3, 0.044715));
      inner = d.unary("tanh", d.withScalar("mul", poly, std::sqrt(2.0 / M_PI)));
    } else {  // 0.5 x (1 + erf(x / sqrt(2)))
      inner = d.unary("erf", d.withScalar("mul", x, M_SQRT1_2));
    }
    return d.binary("mul", d.withScalar("mul", x, 0.5), d.withScalar("add", inner, 1));
  };
  t["where"] = [](Decomp& d) { return d.where(d.in(0), d.in(1), d.in(2)); };
  t["masked_fill"] = [](Decomp& d) { return d.where(d.in(1), d.scalar(d.a().f("value"), d.dtype(d.in(0))), d.in(0)); };
  t["to"] = [](Decomp& d) { return d.cast(d.in(0), d.outType().dtype); };
  t["full"] = [](Decomp& d) { return d.p("full", {}, d.attrs()); };
  t["arange"] = [](Decomp& d) { return d.p("iota", {}, d.attrs()); };
  t["sym_size"] = [](Decomp& d) { return d.p("sym_size", {}, d.attrs()); };
  t["dropout"] = [](Decomp& d) {
    double prob = d.a().f("p");
    if (!d.a().b("training") || prob == 0.0) return d.in(0);
    const Shape& s = d.shape(d.in(0));
    ValueId u = d.p("uniform_random", {}, {{"shape", s}, {"seed", d.a().i("seed")}, {"dtype", std::string("f32")}});
    ValueId keep = d.binary("ge", u, d.scalar(prob, DType::F32));
    return d.where(keep, d.withScalar("mul", d.in(0), 1.0 / (1.0 - prob)), d.scalar(0, d.dtype(d.in(0))));
  };

}

}  // namespace fusebox
