// Binds the compile path's graph API into torch_tpu._C (see graph_bindings.cpp).
#pragma once
#include <pybind11/pybind11.h>

namespace torch_tpu::python {
void bind_graph(pybind11::module_& m);
}
