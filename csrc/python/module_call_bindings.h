// Binds eager::run_module_call (kernels traced by JAX) into torch_tpu._C.
#pragma once
#include <pybind11/pybind11.h>

namespace torch_tpu::python {
void bind_module_call(pybind11::module_& m);
}
