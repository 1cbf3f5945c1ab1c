// Binds the c10d backend (csrc/distributed) into torch_tpu._C.
#pragma once
#include <pybind11/pybind11.h>

namespace torch_tpu::python {
void bind_distributed(pybind11::module_& m);
}
