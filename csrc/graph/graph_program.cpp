#include "graph/graph_program.h"

#include <c10/util/Exception.h>


#include "device/generator.h"
#include "eager/dtype_map.h"
#include "eager/float64_rule.h"
#include "eager/tpu_type_check.h"

namespace torch_tpu::graph {

GraphCounters& graph_counters() {
  static GraphCounters c;
  return c;
}

GraphProgram::GraphProgram(GraphDesc desc, std::vector<eager::FreshOutput> result_metas,
                           std::vector<OutputSource> outputs, std::string name)
    : desc_(std::move(desc)), result_metas_(std::move(result_metas)), outputs_(std::move(outputs)),
      name_(std::move(name)) {
  static std::atomic<int64_t> next_id{0};
  id_ = std::to_string(next_id++);
  TORCH_CHECK(result_metas_.size() == desc_.results.size(), "torch_tpu graph ", name_, ": ", result_metas_.size(),
              " result metas for ", desc_.results.size(), " results");
  internal_dtypes_.push_back(desc_.default_float);
  for (size_t i = 0; i < desc_.nodes.size(); ++i)
    for (const hlo::TensorType& o : desc_.nodes[i].outputs) {
      internal_dtypes_.push_back(o.dtype);
      if (wide_node_ < 0 && (o.dtype == hlo::DType::F64 || o.dtype == hlo::DType::C128)) {
        wide_node_ = static_cast<int>(i);
        wide_dtype_ = o.dtype;
      }
    }
}

std::vector<at::Tensor> GraphProgram::run(const std::vector<at::Tensor>& args) {
  TORCH_CHECK(static_cast<int>(args.size()) == desc_.num_inputs, "torch_tpu graph ", name_, ": expected ",
              desc_.num_inputs, " inputs, got ", args.size());
  eager::Invocation inv;
  inv.op = "graph";
  // Which inputs are device tensors and which are 0-d CPU scalars decides the
  // program's parameters, so it is part of the key.
  std::string key = id_;
  key.push_back(':');
  std::vector<int> slot(args.size());  // index into inv.inputs (>= 0) or -1 - index into inv.scalars
  int device_index = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    const at::Tensor& t = args[i];
    TORCH_CHECK(t.defined(), "torch_tpu graph ", name_, ": input ", i, " is undefined");
    if (t.device().type() == c10::DeviceType::PrivateUse1) {
      if (device_index < 0) device_index = t.device().index();
      TORCH_CHECK(t.device().index() == device_index, "torch_tpu graph ", name_,
                  ": inputs on two devices, tpu:", device_index, " and ", t.device());
      slot[i] = static_cast<int>(inv.inputs.size());
      inv.inputs.push_back(t);
      key.push_back('t');
    } else {
      TORCH_CHECK(t.device().is_cpu() && t.dim() == 0, "torch_tpu graph ", name_, ": input ", i, " is on ",
                  t.device(), " with shape ", t.sizes(), "; only 0-d CPU tensors may join a tpu graph");
      eager::RuntimeScalar s =
          eager::runtime_scalar_of(t, ("torch_tpu graph " + name_).c_str(), static_cast<int64_t>(i));
      slot[i] = -1 - static_cast<int>(inv.scalars.size());
      inv.scalars.push_back(s);
      key.push_back('s');
    }
  }
  for (const auto& w : desc_.writes) {
    const at::Tensor& t = args.at(w.first);
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "torch_tpu graph ", name_,
                ": the graph writes input ", w.first, ", which is on ", t.device());
    inv.targets.push_back(t);
  }
  inv.device_index = device_index < 0 ? 0 : device_index;
  for (int k = 0; k < desc_.num_generators; ++k)
    inv.generators.push_back(device::default_generator(static_cast<c10::DeviceIndex>(inv.device_index)));
  inv.static_key = std::move(key);
  if (wide_node_ >= 0 && eager::platform_lacks_float64())  // the float64 rule, naming the node that computes in it
    eager::check_float64_rule(eager::to_scalar_type(wide_dtype_), desc_.nodes[wide_node_].op.c_str(), true);
  if (eager::tpu_type_check_enabled()) inv.internal_dtypes = internal_dtypes_;
  inv.infer_fresh = [this]() { return result_metas_; };
  size_t n_scalars = inv.scalars.size();
  inv.lower = [this, &slot, n_scalars](hlo::Builder& b, const std::vector<hlo::Value>& tensors,
                                       const std::vector<hlo::Value>& scalars) {
    std::vector<hlo::Value> inputs;
    for (int s : slot) inputs.push_back(s >= 0 ? tensors.at(s) : scalars.at(-1 - s));
    std::vector<hlo::Value> gen(scalars.begin() + n_scalars, scalars.end());
    return lower_graph(b, desc_, inputs, gen);
  };
  inv.fusable = false;
  bool compiled = false;
  std::vector<at::Tensor> fresh = eager::execute(inv, &compiled);
  GraphCounters& c = graph_counters();
  (compiled ? c.compiles : c.cache_hits)++;
  c.runs++;

  std::vector<at::Tensor> out;
  out.reserve(outputs_.size());
  for (const OutputSource& o : outputs_) {
    switch (o.kind) {
      case OutputSource::Kind::Result: out.push_back(fresh.at(o.index)); break;
      case OutputSource::Kind::Input: out.push_back(args.at(o.index)); break;
      case OutputSource::Kind::None: out.emplace_back(); break;
    }
  }
  return out;
}

}  // namespace torch_tpu::graph
