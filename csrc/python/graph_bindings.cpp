// torch_tpu._C graph API for the torch.compile backend (torch_tpu/_dynamo):
// the Python side describes an AOTAutograd graph with plain tuples (see
// torch_tpu/_dynamo/describe.py); this turns them into a GraphProgram.
#include <torch/csrc/utils/pybind.h>

#include "eager/dtype_map.h"
#include "graph/graph_program.h"
#include "graph/structural_rules.h"
#include "python/graph_bindings.h"

namespace py = pybind11;

namespace torch_tpu::python {
namespace {

using graph::NodeArg;
using ops::Arg;

hlo::DType dtype_of(int64_t code) { return eager::to_hlo(static_cast<c10::ScalarType>(code), "graph"); }

hlo::TensorType type_of(const py::handle& t) {
  auto tup = t.cast<py::tuple>();
  return hlo::TensorType(dtype_of(tup[0].cast<int64_t>()), tup[1].cast<std::vector<int64_t>>());
}

// One argument: (tag, ...) with tags none, t, tl, num, int, float, bool,
// ints, dtype, str, gen, other (describe.py writes them).
NodeArg parse_arg(const py::handle& h) {
  auto tup = h.cast<py::tuple>();
  std::string tag = tup[0].cast<std::string>();
  NodeArg a;
  if (tag == "none") {
    a.kind = Arg::Kind::None;
  } else if (tag == "t") {  // (t, value id, contiguous: -1 unknown, 0, 1)
    a.kind = Arg::Kind::Tensor;
    a.values.push_back(tup[1].cast<int>());
    if (tup.size() > 2) a.contiguous = tup[2].cast<int>();
  } else if (tag == "tl") {
    a.kind = Arg::Kind::TensorList;
    a.values = tup[1].cast<std::vector<int>>();
  } else if (tag == "num") {  // (num, is_tensor_arg, dtype code, value, is_python_number)
    a.kind = tup[1].cast<bool>() ? Arg::Kind::Tensor : Arg::Kind::Scalar;
    a.constant = true;
    a.number_dtype = dtype_of(tup[2].cast<int64_t>());
    py::object v = tup[3];
    if (a.number_dtype == hlo::DType::Pred) a.b = v.cast<bool>();
    else if (hlo::is_float(a.number_dtype)) a.d = v.cast<double>();
    else a.i = v.cast<int64_t>();
    a.is_number = tup[4].cast<bool>();
  } else if (tag == "int") {
    a.kind = Arg::Kind::Int;
    a.i = tup[1].cast<int64_t>();
  } else if (tag == "float") {
    a.kind = Arg::Kind::Double;
    a.d = tup[1].cast<double>();
  } else if (tag == "bool") {
    a.kind = Arg::Kind::Bool;
    a.b = tup[1].cast<bool>();
  } else if (tag == "ints") {
    a.kind = Arg::Kind::IntList;
    a.ints = tup[1].cast<std::vector<int64_t>>();
  } else if (tag == "dtype") {
    a.kind = Arg::Kind::DType;
    a.dtype = dtype_of(tup[1].cast<int64_t>());
  } else if (tag == "str") {
    a.kind = Arg::Kind::String;
    a.s = tup[1].cast<std::string>();
  } else if (tag == "gen") {
    a.kind = Arg::Kind::Generator;
    a.generator = tup[1].cast<int>();
  } else if (tag == "other") {
    a.kind = Arg::Kind::Other;
  } else {
    TORCH_CHECK(false, "torch_tpu graph: unknown argument tag ", tag);
  }
  return a;
}

std::shared_ptr<graph::GraphProgram> make_program(const std::string& name, int num_inputs, const py::list& nodes,
                                                  const py::list& results, const py::list& writes,
                                                  const py::list& outputs, int num_generators,
                                                  int64_t default_float, const std::string& matmul_precision) {
  graph::GraphDesc d;
  d.num_inputs = num_inputs;
  d.num_generators = num_generators;
  d.default_float = dtype_of(default_float);
  d.matmul_precision = matmul_precision == "high"     ? ops::MatmulPrecision::High
                       : matmul_precision == "medium" ? ops::MatmulPrecision::Medium
                                                      : ops::MatmulPrecision::Highest;
  for (const py::handle& n : nodes) {
    auto tup = n.cast<py::tuple>();
    graph::GraphNode node;
    node.op = tup[0].cast<std::string>();
    for (const py::handle& a : tup[1].cast<py::list>()) node.args.push_back(parse_arg(a));
    for (const py::handle& o : tup[2].cast<py::list>()) node.outputs.push_back(type_of(o));
    d.nodes.push_back(std::move(node));
  }
  std::vector<eager::FreshOutput> metas;
  for (const py::handle& r : results) {  // (value id, dtype code, sizes, strides)
    auto tup = r.cast<py::tuple>();
    d.results.push_back(tup[0].cast<int>());
    eager::FreshOutput f;
    f.dtype = static_cast<c10::ScalarType>(tup[1].cast<int64_t>());
    f.sizes = tup[2].cast<std::vector<int64_t>>();
    f.strides = tup[3].cast<std::vector<int64_t>>();
    metas.push_back(std::move(f));
  }
  for (const py::handle& w : writes) {
    auto tup = w.cast<py::tuple>();
    d.writes.emplace_back(tup[0].cast<int>(), tup[1].cast<int>());
  }
  std::vector<graph::OutputSource> outs;
  for (const py::handle& o : outputs) {  // ("result", k) / ("input", i) / ("none", 0)
    auto tup = o.cast<py::tuple>();
    std::string kind = tup[0].cast<std::string>();
    graph::OutputSource s;
    s.kind = kind == "result" ? graph::OutputSource::Kind::Result
             : kind == "input" ? graph::OutputSource::Kind::Input
                               : graph::OutputSource::Kind::None;
    s.index = tup[1].cast<int>();
    outs.push_back(s);
  }
  return std::make_shared<graph::GraphProgram>(std::move(d), std::move(metas), std::move(outs), name);
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<graph::GraphProgram, std::shared_ptr<graph::GraphProgram>>(m, "_GraphProgram")
      .def(py::init(&make_program), py::arg("name"), py::arg("num_inputs"), py::arg("nodes"), py::arg("results"),
           py::arg("writes"), py::arg("outputs"), py::arg("num_generators"), py::arg("default_float"),
           py::arg("matmul_precision"))
      .def("run", &graph::GraphProgram::run)
      .def_property_readonly("name", &graph::GraphProgram::name);
  m.def("_graph_has_lowering", &graph::has_graph_lowering);
  py::register_exception<graph::NodeNotLowered>(m, "_GraphNodeNotLowered", PyExc_RuntimeError);
  m.def("_graph_structural_ops", &graph::structural_ops);
  m.def("_graph_metrics", []() {
    graph::GraphCounters& c = graph::graph_counters();
    py::dict d;
    d["graph_compiles"] = c.compiles.load();
    d["graph_cache_hits"] = c.cache_hits.load();
    d["graph_runs"] = c.runs.load();
    return d;
  });
  m.def("_reset_graph_metrics", []() {
    graph::GraphCounters& c = graph::graph_counters();
    c.compiles = 0;
    c.cache_hits = 0;
    c.runs = 0;
  });
}

}  // namespace torch_tpu::python
