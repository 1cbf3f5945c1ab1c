// The op executor: tpu tensors -> view geometry -> cache key -> executable
// (built by a lowering on a miss) -> execute -> outputs written back.
#pragma once
#include <stdexcept>
#include <ATen/core/Tensor.h>
#include <ATen/core/Generator.h>
#include <c10/core/Scalar.h>

#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::eager {

// A value that changes from call to call, passed as a 0-d operand so it never
// becomes a compile-time constant (DESIGN.md: cache keys are static facts only).
struct RuntimeScalar {
  hlo::DType dtype;
  std::array<uint8_t, 16> bytes{};  // the widest scalar: complex<double>
  // An f64 Python float next to integer tensors only: it travels as f32 when
  // the call's results are float (it promoted: the CPU computes in float),
  // at full value otherwise (stored into an integer tensor, compared).
  bool f32_if_float_results = false;
  // A 0-d CPU tensor of the user's (not a Python number): its dtype is the
  // user's choice, as a device tensor's is (the TPU type check counts it).
  bool user_tensor = false;

  // The stored value as T (the caller knows dtype holds a T).
  template <typename T>
  T as() const {
    T v;
    std::memcpy(&v, bytes.data(), sizeof(T));
    return v;
  }
};
RuntimeScalar runtime_scalar(const c10::Scalar& s, const char* op);
RuntimeScalar runtime_scalar_as(const c10::Scalar& s, hlo::DType dtype);
// A 0-d CPU tensor's value (a Python number PyTorch wrapped, or the user's
// own 0-d tensor) as a runtime scalar. One without data (a fake or meta
// tensor) is an error naming `op` and, when >= 0, the input's position.
RuntimeScalar runtime_scalar_of(const at::Tensor& t, const char* op, int64_t input = -1);

// A result that becomes a new tensor.
struct FreshOutput {
  c10::ScalarType dtype;
  std::vector<int64_t> sizes, strides;
  bool defined = true;  // false: an output the caller masked off (returned undefined)
};

// Emits the results: first one per target (in the target's dtype and sizes),
// then one per fresh output. `tensors` are the inputs' views, dense.
using LowerFn = std::function<std::vector<hlo::Value>(
    hlo::Builder&, const std::vector<hlo::Value>& tensors, const std::vector<hlo::Value>& scalars)>;

// The lowering cannot take these inputs (complex values in a rule that does
// not declare them); the op's kernel runs it on the CPU instead, visibly.
struct FallbackRequired : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// (A boxed call's Invocation is reused: a field added here must be reset in
// call_parser.cpp's clear_call too.)
struct Invocation {
  std::string op;            // named in errors, counted in metrics, part of the key
  std::string static_key;    // structural arguments beyond the tensors' geometry
  std::vector<at::Tensor> inputs;   // tpu tensors the program reads
  std::vector<RuntimeScalar> scalars;
  std::vector<at::Tensor> targets;  // tpu tensors the program writes (in-place / out=)
  // Random state: each generator adds two runtime u64 operands after the
  // scalars (seed, then the Philox offset this call starts at), and advances
  // its offset by the plan's increment (the largest result's element count).
  std::vector<at::Generator> generators;
  int device_index = 0;
  // Dtypes the user's program computes in beyond its inputs and outputs (a
  // graph's intermediate tensors): float64 ones are the user's choice too,
  // for the TPU type check.
  std::vector<hlo::DType> internal_dtypes;
  // May be deferred into a fused window (eager mode fused); a whole graph's
  // program is not: it is fused already.
  bool fusable = true;
  // Called only on a cache miss:
  std::function<std::vector<FreshOutput>()> infer_fresh;
  LowerFn lower;
};

// Runs (compiling on a miss) and returns the fresh outputs; targets are updated.
// `compiled`, when given, says whether this call compiled (a cache miss).
std::vector<at::Tensor> execute(const Invocation& inv, bool* compiled = nullptr);

// A new tpu tensor of the given geometry whose storage starts empty.
at::Tensor new_tpu_tensor(c10::ScalarType dtype, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          int device_index);

}  // namespace torch_tpu::eager
