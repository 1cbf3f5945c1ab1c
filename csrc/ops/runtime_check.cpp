#include "ops/runtime_check.h"

#include <stdexcept>

namespace torch_tpu::ops {

namespace {
thread_local std::vector<RuntimeCheck> recorded;
}

void add_runtime_check(const hlo::Value& failed, CheckKind kind, std::string message) {
  recorded.push_back(RuntimeCheck{failed, kind, std::move(message)});
}

void add_linalg_info_check(const hlo::Value& info, std::string api_name) {
  if (info.type.dtype != hlo::DType::I32)
    throw std::invalid_argument(api_name + ": a LAPACK info check takes an i32 info, not " + info.type.str());
  if (info.type.numel() == 0) return;  // no matrices, nothing to fail
  recorded.push_back(RuntimeCheck{info, CheckKind::LinalgInfo, std::move(api_name)});
}

void check_in_range(hlo::Builder& b, const hlo::Value& index, int64_t lo, int64_t hi, CheckKind kind,
                    std::string message) {
  if (index.type.numel() == 0) return;
  hlo::Value x = b.convert(index, hlo::DType::I64);
  hlo::Value bad = b.binary("or", b.compare(x, b.splat_int(x.type, lo), "LT"), b.compare(x, b.splat_int(x.type, hi), "GE"));
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.type.rank(); ++d) all.push_back(d);
  if (!all.empty())
    bad = b.reduce({bad}, {b.constant_bool(false)}, all, [](hlo::Builder& r, const std::vector<hlo::Value>& a) {
      return std::vector<hlo::Value>{r.binary("or", a[0], a[1])};
    })[0];
  add_runtime_check(bad, kind, std::move(message));
}

std::vector<RuntimeCheck> take_runtime_checks() {
  std::vector<RuntimeCheck> out;
  out.swap(recorded);
  return out;
}

}  // namespace torch_tpu::ops
