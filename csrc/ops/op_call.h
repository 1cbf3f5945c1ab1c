// A torch-free description of one ATen op call, built by the eager executor
// from the IValue stack (and by the compile path from FX nodes). Lowering
// rules read their arguments from it in schema order.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/tensor_type.h"

namespace torch_tpu::ops {

struct Arg {
  enum class Kind { None, Tensor, TensorList, Scalar, Int, Double, Bool, IntList, DType, String, Generator, Other };
  Kind kind = Kind::None;
  // Tensor: index into the rule's operand list; TensorList: one index each
  // (-1 for a None in a Tensor?[] list). Scalar: a runtime 0-d operand (its
  // value changes without recompiling). Generator: two runtime u64 operands,
  // the seed then the Philox offset this call starts at.
  std::vector<int> operands;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::vector<int64_t> ints;
  std::vector<double> doubles;  // float[] arguments (Kind::Other): histogram's range
  hlo::DType dtype = hlo::DType::F32;
  std::string s;

  bool is_none() const { return kind == Kind::None; }
  int operand() const { return operands.at(0); }
};

// torch.set_float32_matmul_precision for float32 dots and convolutions
// ("highest", "high", "medium"): StableHLO's HIGHEST, HIGH and DEFAULT
// precision (on a TPU: full float32, three bf16 passes, one bf16 pass).
enum class MatmulPrecision : char { Highest = 'H', High = 'h', Medium = 'm' };

struct OpCall {
  std::string op;                         // "add.Tensor"
  std::vector<Arg> args;                  // schema order
  std::vector<hlo::TensorType> operands;  // types of the rule's operands
  std::vector<hlo::TensorType> outputs;   // the result types PyTorch's meta kernel gives
  // Per operand: a Python number (Scalar argument or wrapped number), which
  // ranks lowest in type promotion.
  std::vector<bool> operand_is_number;
  // Per operand: 1 for a tensor whose layout is contiguous (PyTorch's
  // is_contiguous, which some CPU kernels branch on), 0 if not, -1 unknown.
  // From the eager executor (its cache key holds the strides) or a graph's
  // traced tensors; empty means unknown too.
  std::vector<int8_t> operand_contiguous;
  hlo::DType default_float = hlo::DType::F32;  // torch.get_default_dtype()
  MatmulPrecision matmul_precision = MatmulPrecision::Highest;

  const Arg& arg(size_t i) const { return args.at(i); }
};

}  // namespace torch_tpu::ops
