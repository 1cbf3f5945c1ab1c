// One compiled graph: its description, run as a single executor Invocation
// (op "graph"), so it shares the executable cache, view materialization,
// donation of written storages and the compile/hit counters with eager ops.
#pragma once
#include <ATen/core/Tensor.h>

#include <atomic>
#include <string>
#include <vector>

#include "eager/executor.h"
#include "graph/graph_desc.h"

namespace torch_tpu::graph {

// Where each graph output comes from.
struct OutputSource {
  enum class Kind { Result, Input, None } kind = Kind::None;
  int index = 0;  // into GraphDesc::results, or the graph inputs
};

class GraphProgram {
 public:
  GraphProgram(GraphDesc desc, std::vector<eager::FreshOutput> result_metas, std::vector<OutputSource> outputs,
               std::string name);

  // Runs the graph on `args` (its inputs in order: tpu tensors, or 0-d CPU
  // tensors that become runtime scalars); compiles on the first call per
  // input signature. Inputs named in desc.writes are updated in place.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& args);

  const std::string& name() const { return name_; }

 private:
  GraphDesc desc_;
  std::vector<eager::FreshOutput> result_metas_;
  std::vector<OutputSource> outputs_;
  std::string name_;
  std::string id_;  // unique per program: the executor's static key
  // Fixed by desc_, found once: the dtypes the graph computes in (for the
  // TPU type check) and its first node computing in float64/complex128.
  std::vector<hlo::DType> internal_dtypes_;
  int wide_node_ = -1;  // an index: desc_ moves with the program
  hlo::DType wide_dtype_ = hlo::DType::F64;
};

struct GraphCounters {
  std::atomic<int64_t> compiles{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> runs{0};
};
GraphCounters& graph_counters();

}  // namespace torch_tpu::graph
