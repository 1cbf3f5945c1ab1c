// A compiled program, loaded on a client and ready to execute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pjrt/buffer.h"
#include "pjrt/compile_options.h"
#include "pjrt/device.h"
#include "pjrt/event.h"

namespace torch_tpu::pjrt {

class Client;

namespace abi {
struct PJRT_LoadedExecutable;
}

struct ExecuteResult {
  // One per program result, returned before execution finishes: they become
  // ready when the program does, and any use of them waits implicitly.
  std::vector<std::shared_ptr<Buffer>> outputs;
  // Completes when the device finished the execution; holds its error.
  Event done;
};

// Held by std::shared_ptr; keeps its Client alive.
class Executable : public std::enable_shared_from_this<Executable> {
 public:
  // Compiles StableHLO in MLIR text (or bytecode) form, program format
  // "mlir". The entry function must be public and named `main`. Compile
  // failures (including parse errors) throw Error with the plugin's message.
  static std::shared_ptr<Executable> compile(
      std::shared_ptr<Client> client, const std::string& stablehlo_mlir_text,
      const CompileSettings& settings = {});

  // Loads bytes from serialize() (same plugin build only; the caller keys
  // its cache so). `settings` must be the ones the program was compiled with:
  // they are not re-applied, only remembered (portable or not). Throws Error,
  // kUnimplemented when the plugin lacks the entry.
  static std::shared_ptr<Executable> deserialize(
      std::shared_ptr<Client> client, const std::string& bytes,
      const CompileSettings& settings = {});

  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  size_t num_outputs() const { return num_outputs_; }
  const std::string& name() const { return name_; }
  bool portable() const { return settings_.portable; }

  // Enqueues one execution on `device` and returns at once (asynchronous
  // execution): outputs are handed back immediately, `done` tracks the run.
  //
  // Donation: an argument that the program aliases to an output (argument
  // attribute `tf.aliasing_output = <output index> : i32` in the MLIR) is
  // donated: its device memory is reused for that output and the argument
  // Buffer becomes deleted (is_deleted() is true, reads fail). List an
  // argument's index in `non_donatable_input_indices` to keep it valid; the
  // plugin then copies instead of donating.
  //
  // Portable executables run on any addressable device. A non-portable one
  // runs on its compile-time device, which `device` must name (single-device
  // programs only). Arguments must already live on `device`.
  ExecuteResult execute(
      const std::vector<Buffer*>& args, const Device& device,
      const std::vector<int64_t>& non_donatable_input_indices = {});

  // The plugin's serialization of the compiled program, for a persistent
  // cache. Throws Error (kUnimplemented when the plugin lacks the entry).
  std::string serialize() const;

  abi::PJRT_LoadedExecutable* raw() const { return executable_; }
  const std::shared_ptr<Client>& client() const { return client_; }

 private:
  Executable(std::shared_ptr<Client> client,
             abi::PJRT_LoadedExecutable* executable, CompileSettings settings);

  std::shared_ptr<Client> client_;
  abi::PJRT_LoadedExecutable* executable_;
  CompileSettings settings_;
  size_t num_outputs_ = 0;
  std::string name_;
  // Compile-time devices of a non-portable executable.
  std::vector<Device> devices_;
};

}  // namespace torch_tpu::pjrt
