// Writes the text of every program handed to compile() into a folder, for
// people reading what we emit and for tests asserting on it:
// TORCH_TPU_DUMP_PROGRAMS=DIR (read once), or set_program_dump_dir().
#pragma once
#include <string>

namespace torch_tpu::compile_cache {

// "" stops dumping.
void set_program_dump_dir(const std::string& dir);

// Writes `program` as DIR/<pid>-<n>.mlir when a folder is set.
void dump_program(const std::string& program);

}  // namespace torch_tpu::compile_cache
