#include "core/ops/extern_prims.h"

#include "core/ir/graph.h"

namespace fusebox {

const std::vector<ExternPrim>& externPrims() {
  static const std::vector<ExternPrim> ops = {
#define FB_EXTERN_PRIM(Enum, prim, kind, pool, gradient, integerInput) \
  {ExternOp::Enum, prim, ExternKind::kind, PoolWindow::pool, gradient, integerInput},
#include "core/ops/extern_prims.def"
#undef FB_EXTERN_PRIM
  };
  return ops;
}

const ExternPrim& externPrim(ExternOp op) { return externPrims()[static_cast<size_t>(op)]; }

const ExternPrim* findExternPrim(const std::string& name) {
  const std::string bare = primBaseName(name);
  for (const ExternPrim& e : externPrims())
    if (e.prim == bare) return &e;
  return nullptr;
}

}  // namespace fusebox
