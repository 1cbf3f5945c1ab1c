// TORCH_TPU_VALIDATE_CACHE=1: every cache hit rebuilds the program the call
// would get on a miss (meta kernel, lowering, program text; no XLA compile)
// and compares it with the cached one. A difference means the cache key
// misses a fact the program depends on: the call raises, naming the op and
// the fact, instead of silently running a program built for another call.
#pragma once
#include <string>
#include <vector>

#include "eager/executor.h"

namespace torch_tpu::eager {

// What a program was built for, kept with each cached plan in validation mode.
struct ProgramFacts {
  std::vector<FreshOutput> fresh;        // the meta kernel's outputs
  std::vector<std::string> parameters;   // per program parameter: what feeds it
  std::vector<std::string> checks;       // messages of its runtime checks
  std::string text;                      // the StableHLO program
};

bool cache_validation_enabled();
int64_t cache_validations();  // hits checked so far (tests assert the mode is on)

// Throws (RuntimeError naming `op` and the first differing fact) unless the
// program built now is the cached one.
void check_program_fits(const std::string& op, const ProgramFacts& cached, const ProgramFacts& now);

}  // namespace torch_tpu::eager
