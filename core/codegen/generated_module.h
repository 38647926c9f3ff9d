// What a backend's code generator makes of one scheduled loop program: the source, which lines
// of it each kernel occupies (so a selection in a graph can light up code and back), and the
// backend's own description of the module (CppModule, CudaModule) that its compiler and
// executable read.
#pragma once

#include <any>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/ir/error.h"
#include "core/ir/graph.h"

namespace fusebox {

struct KernelLines {
  int kernel = 0;                   // index into Schedule::kernels
  std::string name;                 // "kernel3", or the extern's host launch
  int firstLine = 0, lastLine = 0;  // 1-based, inclusive; 0 when it has no lines of its own
  std::vector<NodeId> provenance;   // traced nodes it computes
};

struct GeneratedModule {
  std::string target;                // the backend that generated it: "cpu", "cuda"
  std::string source;
  std::vector<KernelLines> kernels;  // in execution order
  std::any native;                   // the backend's module: CppModule (cpu), CudaModule (cuda)

  // The backend's module; an Error naming the target when it is another type.
  template <class T>
  const T& as() const {
    if (const T* m = std::any_cast<T>(&native)) return *m;
    throw Error("internal error: the " + target + " module is not a " + typeid(T).name());
  }
};

}  // namespace fusebox
