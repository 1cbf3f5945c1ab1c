// A torch-free description of one AOTAutograd graph (functional core ATen), as
// the compile path hands it over: numbered values, nodes that become OpCalls
// for the shared ops/ rules, the values the graph returns and the inputs it
// writes. Values 0..num_inputs-1 are the graph's inputs; node k's outputs take
// the next ids in order.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "ops/op_call.h"

namespace torch_tpu::graph {

struct NodeArg {
  ops::Arg::Kind kind = ops::Arg::Kind::None;
  std::vector<int> values;  // Tensor / TensorList: value ids (-1: a None in a Tensor?[] list)
  // A number baked into the graph (a Scalar argument, or a 0-d CPU constant
  // tensor): emitted as a 0-d constant operand of `number_dtype`.
  bool constant = false;
  bool is_number = false;  // a Python number (lowest rank in type promotion)
  hlo::DType number_dtype = hlo::DType::F64;
  double d = 0;
  int64_t i = 0;
  bool b = false;
  std::vector<int64_t> ints;
  hlo::DType dtype = hlo::DType::F32;
  std::string s;
  int generator = -1;  // Generator: which of the graph's generator operand pairs
  // Tensor: whether the traced (fake) tensor is contiguous, -1 if unknown; the
  // rules that branch on it (ops::OpCall::operand_contiguous) see what
  // AOTAutograd saw when it traced the backward.
  int contiguous = -1;
};

struct GraphNode {
  std::string op;                       // registry name: "add.Tensor"
  std::vector<NodeArg> args;            // schema order
  std::vector<hlo::TensorType> outputs;  // from the FX node's fake tensors
};

struct GraphDesc {
  int num_inputs = 0;
  std::vector<GraphNode> nodes;
  std::vector<int> results;                   // value ids returned as new tensors
  std::vector<std::pair<int, int>> writes;    // (input index, value id): written back into the input
  int num_generators = 0;
  hlo::DType default_float = hlo::DType::F32;
  ops::MatmulPrecision matmul_precision = ops::MatmulPrecision::Highest;
};

// Emits the graph: the written values (one per `writes`, in the input's type),
// then the results. `inputs` are the graph inputs' values; `generator_operands`
// hold two 0-d u64 operands (seed, offset) per generator.
std::vector<hlo::Value> lower_graph(hlo::Builder& b, const GraphDesc& g, const std::vector<hlo::Value>& inputs,
                                    const std::vector<hlo::Value>& generator_operands);

// Rule lookup for a graph node: graph-only structural rules first, then ops/.
bool has_graph_lowering(const std::string& op);

// A node whose rule does not lower this case (ops::NotLowered: complex values
// the rule refuses, or a layout fact the graph lacks), raised when the graph
// is compiled for its first inputs.
struct NodeNotLowered : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace torch_tpu::graph
