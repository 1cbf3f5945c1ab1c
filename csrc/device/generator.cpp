#include "device/generator.h"

#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

#include "device/runtime.h"

namespace torch_tpu::device {

TpuGeneratorImpl::TpuGeneratorImpl(c10::DeviceIndex device_index, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void TpuGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t TpuGeneratorImpl::seed() {
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) | rd();
  set_current_seed(s);
  return s;
}

void TpuGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK_TYPE(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
                   "expected a torch.ByteTensor as the tpu RNG state, got ", new_state.dtype().name());
  TORCH_CHECK(new_state.numel() == 16, "the tpu RNG state is 16 bytes (seed, offset), got ", new_state.numel());
  const auto* bytes = static_cast<const uint8_t*>(new_state.data());
  std::memcpy(&seed_, bytes, 8);
  std::memcpy(&offset_, bytes + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> TpuGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({16}, at::TensorOptions().dtype(at::kByte));
  auto* bytes = state.mutable_data_ptr<uint8_t>();
  std::memcpy(bytes, &seed_, 8);
  std::memcpy(bytes + 8, &offset_, 8);
  return state.getIntrusivePtr();
}

uint64_t TpuGeneratorImpl::advance(uint64_t increment) {
  uint64_t start = offset_;
  offset_ += increment;
  return start;
}

TpuGeneratorImpl* TpuGeneratorImpl::clone_impl() const {
  auto* g = new TpuGeneratorImpl(device().index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(c10::DeviceIndex device_index) {
  static std::mutex mu;
  static std::deque<at::Generator> generators;  // deque: references stay valid
  int count = device_count();
  int index = device_index < 0 ? current_device() : device_index;
  TORCH_CHECK(index >= 0 && index < std::max(count, 1), "tpu device index ", index, " is out of range (",
              count, " devices)");
  std::lock_guard<std::mutex> lock(mu);
  while (static_cast<int>(generators.size()) <= index)
    generators.push_back(at::make_generator<TpuGeneratorImpl>(static_cast<c10::DeviceIndex>(generators.size())));
  return generators[index];
}

at::Generator new_generator(c10::DeviceIndex device_index) {
  int index = device_index < 0 ? current_device() : device_index;
  return at::make_generator<TpuGeneratorImpl>(static_cast<c10::DeviceIndex>(index));
}

}  // namespace torch_tpu::device
