#include "python/module_call_bindings.h"

#include <torch/csrc/utils/pybind.h>

#include "eager/jax_module_op.h"

namespace torch_tpu::python {

namespace py = pybind11;

void bind_module_call(py::module_& m) {
  m.def(
      "_run_module_call",
      [](const std::string& name, const std::string& fingerprint, const std::string& symbol,
         const std::string& functions, const std::vector<at::ScalarType>& result_dtypes,
         const std::vector<std::vector<int64_t>>& result_sizes, const std::vector<at::Tensor>& inputs,
         const std::vector<std::pair<int, int>>& aliases) {
        eager::ModuleCall call{name, fingerprint, symbol, functions, result_dtypes, result_sizes, aliases};
        return eager::run_module_call(call, inputs);
      },
      py::arg("name"), py::arg("fingerprint"), py::arg("symbol"), py::arg("functions"), py::arg("result_dtypes"),
      py::arg("result_sizes"), py::arg("inputs"), py::arg("aliases") = std::vector<std::pair<int, int>>{},
      "Runs the MLIR function `symbol` (defined, with what it calls, in `functions`) on tpu tensors; "
      "(input, result) aliases write those results into the donated inputs.");
}

}  // namespace torch_tpu::python
