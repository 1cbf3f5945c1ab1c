// torch._foreach_* ops (optimizers with foreach=True, clip_grad_norm_): the
// CPU backend implements them as loops over per-tensor ATen ops that dispatch
// on each tensor's device. Routing tpu calls to those loops makes every
// element run through the tpu kernels: no CPU fallback, no copies.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "eager/boxed_kernel.h"
#include "eager/op_variants.h"

namespace torch_tpu::eager {
namespace {

void foreach_as_loop(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

}  // namespace

void register_foreach_ops() {
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                        __LINE__);
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::_foreach_", 0) != 0) continue;
    auto handle = dispatcher.findSchema(name);
    if (!handle || !handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) continue;
    if (handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
    std::string n = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
    lib->impl(n.c_str(), torch::CppFunction::makeFromBoxedFunction<&foreach_as_loop>());
  }
}

}  // namespace torch_tpu::eager
