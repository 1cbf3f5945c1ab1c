#include "python/distributed_bindings.h"

#include <torch/csrc/utils/pybind.h>

#include "distributed/host_staging_transport.h"
#include "distributed/tpu_backend.h"

namespace torch_tpu::python {

namespace py = pybind11;
using distributed::HostStagingTransport;
using distributed::TpuBackend;

void bind_distributed(py::module_& m) {
  // torch's own bindings register c10d::Backend; ours derives from it so
  // that ProcessGroup._register_backend accepts it.
  py::module_::import("torch.distributed");
  py::class_<TpuBackend, c10d::Backend, c10::intrusive_ptr<TpuBackend>>(m, "TpuBackend")
      .def(py::init([](c10::intrusive_ptr<c10d::Backend> host_group, int rank, int size) {
             return c10::make_intrusive<TpuBackend>(rank, size,
                                                    std::make_unique<HostStagingTransport>(std::move(host_group)));
           }),
           py::arg("host_group"), py::arg("rank"), py::arg("size"),
           "A tpu_dist backend whose collectives stage through the host group (a CPU backend such as gloo).")
      .def_property_readonly("transport", &TpuBackend::transport_name)
      .def_property_readonly("allreduces_completed_in_check", &TpuBackend::allreduces_completed_in_check,
                             "Small all_reduces that rode on the agreement check (one host round instead of two).");
}

}  // namespace torch_tpu::python
