// The runtime prelude compiled into every generated CPU module (see cpu_prelude.cpp).
#pragma once

namespace fusebox {
const char* cpuPrelude();
}
