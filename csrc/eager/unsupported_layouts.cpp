// Sparse, quantized and (strided-layout) nested tensors have no tpu kernels.
// Without these fallbacks PyTorch's message names a dispatch key
// ("'Sparsetpu' backend"); with them the error names the feature, the op and
// what to do instead. Ops with composite kernels still run through those.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

namespace torch_tpu::eager {
namespace {

template <const char* Feature, const char* Advice>
void unsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_tpu: ", Feature, " are not supported on tpu (", op.schema().name(),
                              op.schema().overload_name().empty() ? "" : ".", op.schema().overload_name(),
                              "); ", Advice);
}

constexpr char kSparse[] = "sparse tensors";
constexpr char kSparseAdvice[] = "keep sparse (COO, CSR, CSC, BSR, BSC) tensors on the CPU, or call .to_dense() before moving them to tpu";
constexpr char kQuantized[] = "quantized tensors";
constexpr char kQuantizedAdvice[] = "dequantize() quint8/qint8/qint32 tensors first, or keep them on the CPU";
constexpr char kNested[] = "nested tensors with the strided layout";
constexpr char kNestedAdvice[] = "use torch.nested.nested_tensor(..., layout=torch.jagged), which runs on tpu";

}  // namespace

// Dense tpu tensors turned into (or assembled as) sparse ones: the compressed
// constructors are composite and would build a tpu sparse tensor no op can
// use, and `_to_sparse*` would run on the CPU first. Both stop here instead.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name :
       {"_sparse_compressed_tensor_unsafe", "_sparse_csr_tensor_unsafe", "_sparse_csc_tensor_unsafe",
        "_sparse_bsr_tensor_unsafe", "_sparse_bsc_tensor_unsafe", "sparse_compressed_tensor.comp_plain_value",
        "sparse_compressed_tensor.comp_plain_value_size", "sparse_csr_tensor.crow_col_value",
        "sparse_csr_tensor.crow_col_value_size", "sparse_csc_tensor.ccol_row_value",
        "sparse_csc_tensor.ccol_row_value_size", "sparse_bsr_tensor.crow_col_value",
        "sparse_bsr_tensor.crow_col_value_size", "sparse_bsc_tensor.ccol_row_value",
        "sparse_bsc_tensor.ccol_row_value_size", "_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr",
        "_to_sparse_csc", "_to_sparse_bsr", "_to_sparse_bsc"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&unsupported<kSparse, kSparseAdvice>>());
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&unsupported<kSparse, kSparseAdvice>>());
}
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&unsupported<kSparse, kSparseAdvice>>());
}
// A compressed sparse tensor can still reach tpu (`.to("tpu")` builds it
// without the dispatcher); these ops have composite kernels that would fail
// with layout errors that do not say why: the first uses of such a tensor.
TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  for (const char* name : {"_to_copy", "copy_", "clone", "values", "crow_indices", "col_indices", "ccol_indices",
                           "row_indices", "_to_dense", "to_dense", "add.Tensor", "mul.Tensor", "sub.Tensor"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&unsupported<kSparse, kSparseAdvice>>());
}
TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&unsupported<kQuantized, kQuantizedAdvice>>());
}
TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&unsupported<kNested, kNestedAdvice>>());
}

}  // namespace torch_tpu::eager
