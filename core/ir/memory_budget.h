// The memory budget: how many bytes a model may make Fusebox allocate (interpreter tensors,
// runtime buffers, imported constants). Checked before each allocation whose size the model
// controls, so a huge model is a clear LimitError instead of std::bad_alloc or the OOM killer.
// One process-wide setting (`--max-memory` on the CLI); by default half of physical RAM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/ir/error.h"

namespace fusebox {

int64_t defaultMemoryBudget();  // half of physical RAM (sysconf), 4 GiB when unknown
int64_t memoryBudget();
void setMemoryBudget(int64_t bytes);  // bytes > 0

// "12G", "512M", "1.5GB", "64KiB", "100000" (bytes); K/M/G/T are powers of 1024. nullopt when
// malformed, not positive or over int64.
std::optional<int64_t> parseByteSize(std::string_view text);
// "100.0 GB", "512.0 MB", "312 bytes" (powers of 1024, as parseByteSize reads them).
std::string formatBytes(int64_t bytes);

// Throws LimitError at `loc` when `bytes` (nullopt: beyond int64) do not fit in the budget after
// `heldBytes` already in use: "<what> needs 100.0 GB for f32[50000, 500000], over the memory
// budget of 12.0 GB (--max-memory)". `what` names the value and node, `forWhat` the type.
void checkMemory(std::optional<int64_t> bytes, const std::string& what, const std::string& forWhat,
                 const SourceLoc& loc = {}, int64_t heldBytes = 0);

}  // namespace fusebox
