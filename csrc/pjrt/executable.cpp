#include "pjrt/executable.h"

#include <utility>

#include "pjrt/api.h"
#include "pjrt/client.h"
#include "pjrt/error.h"
#include "pjrt/fault_injection.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {

std::shared_ptr<Executable> Executable::compile(
    std::shared_ptr<Client> client, const std::string& stablehlo_mlir_text,
    const CompileSettings& settings) {
  if (!client) throw Error(kInvalidArgument, "Executable::compile: null Client");
  if (take_fault(FaultSite::Compile)) throw Error(kInternal, "injected compile fault");
  if (settings.num_replicas < 1 || settings.num_partitions < 1) {
    throw Error(kInvalidArgument,
                "Executable::compile: num_replicas and num_partitions must "
                "be >= 1");
  }
  const abi::PJRT_Api* c = client->api()->raw();
  static const char kFormat[] = "mlir";
  const std::string options = serialize_compile_options(client->compile_settings(settings));
  // PJRT_Program::code is non-const in the ABI; hand it a private copy.
  std::string code = stablehlo_mlir_text;

  auto program = abi::make<abi::PJRT_Program>();
  program.code = code.data();
  program.code_size = code.size();
  program.format = kFormat;
  program.format_size = sizeof(kFormat) - 1;

  auto args = abi::make<abi::PJRT_Client_Compile_Args>();
  args.client = client->raw();
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  check(c, c->PJRT_Client_Compile(&args), "PJRT_Client_Compile");
  return std::shared_ptr<Executable>(
      new Executable(std::move(client), args.executable, settings));
}

std::shared_ptr<Executable> Executable::deserialize(
    std::shared_ptr<Client> client, const std::string& bytes,
    const CompileSettings& settings) {
  if (!client) {
    throw Error(kInvalidArgument, "Executable::deserialize: null Client");
  }
  if (take_fault(FaultSite::Compile)) throw Error(kInternal, "injected compile fault (loading a compiled program)");
  const abi::PJRT_Api* c = client->api()->raw();
  if (c->PJRT_Executable_DeserializeAndLoad == nullptr) {
    throw Error(kUnimplemented,
                "plugin does not implement PJRT_Executable_DeserializeAndLoad");
  }
  auto args = abi::make<abi::PJRT_Executable_DeserializeAndLoad_Args>();
  args.client = client->raw();
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  check(c, c->PJRT_Executable_DeserializeAndLoad(&args),
        "PJRT_Executable_DeserializeAndLoad");
  return std::shared_ptr<Executable>(
      new Executable(std::move(client), args.loaded_executable, settings));
}

std::string Executable::serialize() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  if (c->PJRT_Executable_Serialize == nullptr) {
    throw Error(kUnimplemented,
                "plugin does not implement PJRT_Executable_Serialize");
  }
  // Serialize works on the unloaded view, which we own and must destroy.
  auto get = abi::make<abi::PJRT_LoadedExecutable_GetExecutable_Args>();
  get.loaded_executable = executable_;
  check(c, c->PJRT_LoadedExecutable_GetExecutable(&get),
        "PJRT_LoadedExecutable_GetExecutable");
  auto args = abi::make<abi::PJRT_Executable_Serialize_Args>();
  args.executable = get.executable;
  abi::PJRT_Error* error = c->PJRT_Executable_Serialize(&args);
  std::string bytes;
  if (error == nullptr && args.serialized_bytes != nullptr) {
    bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
  }
  if (args.serialized_executable != nullptr &&
      args.serialized_executable_deleter != nullptr) {
    args.serialized_executable_deleter(args.serialized_executable);
  }
  auto destroy_view = abi::make<abi::PJRT_Executable_Destroy_Args>();
  destroy_view.executable = get.executable;
  check_noexcept(c, c->PJRT_Executable_Destroy(&destroy_view),
                 "PJRT_Executable_Destroy");
  check(c, error, "PJRT_Executable_Serialize");
  if (bytes.empty()) {
    throw Error(kInternal, "PJRT_Executable_Serialize returned no bytes");
  }
  return bytes;
}

Executable::Executable(std::shared_ptr<Client> client,
                       abi::PJRT_LoadedExecutable* executable,
                       CompileSettings settings)
    : client_(std::move(client)),
      executable_(executable),
      settings_(std::move(settings)) {
  const abi::PJRT_Api* c = client_->api()->raw();
  abi::PJRT_Executable* unloaded = nullptr;
  try {
    // Output count and name live on the (unloaded) PJRT_Executable view,
    // which we must free ourselves.
    auto get = abi::make<abi::PJRT_LoadedExecutable_GetExecutable_Args>();
    get.loaded_executable = executable_;
    check(c, c->PJRT_LoadedExecutable_GetExecutable(&get),
          "PJRT_LoadedExecutable_GetExecutable");
    unloaded = get.executable;

    auto outputs = abi::make<abi::PJRT_Executable_NumOutputs_Args>();
    outputs.executable = unloaded;
    check(c, c->PJRT_Executable_NumOutputs(&outputs),
          "PJRT_Executable_NumOutputs");
    num_outputs_ = outputs.num_outputs;

    auto name = abi::make<abi::PJRT_Executable_Name_Args>();
    name.executable = unloaded;
    check(c, c->PJRT_Executable_Name(&name), "PJRT_Executable_Name");
    name_.assign(name.executable_name, name.executable_name_size);

    auto devices =
        abi::make<abi::PJRT_LoadedExecutable_AddressableDevices_Args>();
    devices.executable = executable_;
    check(c, c->PJRT_LoadedExecutable_AddressableDevices(&devices),
          "PJRT_LoadedExecutable_AddressableDevices");
    for (size_t i = 0; i < devices.num_addressable_devices; ++i) {
      devices_.emplace_back(c, devices.addressable_devices[i]);
    }
  } catch (...) {
    auto destroy_view = abi::make<abi::PJRT_Executable_Destroy_Args>();
    destroy_view.executable = unloaded;
    check_noexcept(c, c->PJRT_Executable_Destroy(&destroy_view),
                   "PJRT_Executable_Destroy");
    auto destroy = abi::make<abi::PJRT_LoadedExecutable_Destroy_Args>();
    destroy.executable = executable_;
    check_noexcept(c, c->PJRT_LoadedExecutable_Destroy(&destroy),
                   "PJRT_LoadedExecutable_Destroy");
    throw;
  }
  auto destroy_view = abi::make<abi::PJRT_Executable_Destroy_Args>();
  destroy_view.executable = unloaded;
  check(c, c->PJRT_Executable_Destroy(&destroy_view),
        "PJRT_Executable_Destroy");
}

Executable::~Executable() {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_LoadedExecutable_Destroy_Args>();
  args.executable = executable_;
  check_noexcept(c, c->PJRT_LoadedExecutable_Destroy(&args),
                 "PJRT_LoadedExecutable_Destroy");
}

ExecuteResult Executable::execute(
    const std::vector<Buffer*>& args, const Device& device,
    const std::vector<int64_t>& non_donatable_input_indices) {
  if (!device.valid()) {
    throw Error(kInvalidArgument, "Executable::execute: empty Device");
  }
  std::vector<abi::PJRT_Buffer*> arg_list;
  arg_list.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == nullptr) {
      throw Error(kInvalidArgument, "Executable::execute: argument " +
                                        std::to_string(i) + " is null");
    }
    arg_list.push_back(args[i]->raw());
  }

  // Portable: name the device per call. Non-portable: the executable
  // already knows its device; naming it again is rejected by plugins.
  abi::PJRT_Device* execute_device = device.raw();
  if (!settings_.portable) {
    if (devices_.size() != 1 || devices_[0] != device) {
      throw Error(kUnimplemented,
                  "Executable::execute: non-portable executable '" + name_ +
                      "' runs on " + std::to_string(devices_.size()) +
                      " compile-time device(s); only a single-device program "
                      "on its own device is supported");
    }
    execute_device = nullptr;
  }

  auto options = abi::make<abi::PJRT_ExecuteOptions>();
  options.non_donatable_input_indices = non_donatable_input_indices.data();
  options.num_non_donatable_input_indices = non_donatable_input_indices.size();

  std::vector<abi::PJRT_Buffer*> outputs(num_outputs_, nullptr);
  abi::PJRT_Buffer* const* argument_lists[] = {arg_list.data()};
  abi::PJRT_Buffer** output_lists[] = {outputs.data()};
  abi::PJRT_Event* complete_events[] = {nullptr};

  const abi::PJRT_Api* c = client_->api()->raw();
  auto exec = abi::make<abi::PJRT_LoadedExecutable_Execute_Args>();
  exec.executable = executable_;
  exec.options = &options;
  exec.argument_lists = argument_lists;
  exec.num_devices = 1;
  exec.num_args = arg_list.size();
  exec.output_lists = output_lists;
  exec.device_complete_events = complete_events;
  exec.execute_device = execute_device;
  check(c, c->PJRT_LoadedExecutable_Execute(&exec),
        "PJRT_LoadedExecutable_Execute");

  // Take ownership of everything the plugin returned before anything can
  // throw, so no handle leaks.
  ExecuteResult result;
  result.done = Event(c, complete_events[0], shared_from_this());
  result.outputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    try {
      result.outputs.push_back(Buffer::adopt(client_, outputs[i]));
    } catch (...) {
      // adopt() already released outputs[i]; release the ones after it.
      for (size_t j = i + 1; j < outputs.size(); ++j) {
        auto destroy = abi::make<abi::PJRT_Buffer_Destroy_Args>();
        destroy.buffer = outputs[j];
        check_noexcept(c, c->PJRT_Buffer_Destroy(&destroy),
                       "PJRT_Buffer_Destroy");
      }
      throw;
    }
  }
  // Injected failures behave as a device's: asynchronous, carried by the
  // completion event and the results, and passed on by programs reading them.
  std::shared_ptr<const Error> failure;
  for (Buffer* a : args)
    if (a->failure()) failure = a->failure();
  if (take_fault(FaultSite::Execute))
    failure = std::make_shared<Error>(kInternal, "injected execution fault in '" + name_ + "'");
  if (failure) {
    result.done = Event::failed(failure);
    for (auto& o : result.outputs) o->set_failure(failure);
  }
  return result;
}

}  // namespace torch_tpu::pjrt
