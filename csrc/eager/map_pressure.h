// Guard against the kernel's per-process limit on memory maps
// (vm.max_map_count, 65530 by default). Each XLA CPU executable keeps maps
// for its JIT code; a long process (a test run over thousands of shapes)
// that keeps enough of them alive makes the next compile fail inside XLA,
// and on this plugin the failure then crashes the C++ unwinder. So before
// compiling, past half the limit, every program cache drops its least
// recently used half (a program dropped and needed again compiles again or
// loads from the persistent compile cache).
#pragma once

namespace torch_tpu::eager {

// Cheap to call before every compile: the maps are counted only every few calls.
void relieve_map_pressure();

}  // namespace torch_tpu::eager
