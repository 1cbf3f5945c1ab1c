// What kind of thing a boxed argument is, shared by the code that walks a
// call's stack (call_parser, run_meta, the CPU-kernel checks).
#pragma once
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

namespace torch_tpu::eager {

// A formal's type kind; for T? the kind of T.
inline c10::TypeKind formal_kind(const c10::Argument& a) {
  c10::TypePtr t = a.type();
  if (t->kind() == c10::TypeKind::OptionalType) t = t->castRaw<c10::OptionalType>()->getElementType();
  return t->kind();
}

// A list of tensors, or of optional tensors (Tensor?[]: the indices of x[i, j]);
// the other lists a lowered op takes hold numbers.
inline bool is_tensors_list(const c10::IValue& v) {
  return v.isTensorList() || (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList());
}

}  // namespace torch_tpu::eager
