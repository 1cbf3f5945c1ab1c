// An object borrowed from this thread's pool for the length of one call, so
// that its vectors keep their capacity from call to call and a repeated tiny
// op does not allocate them again. A nested call on the same thread (an index
// tensor moved to tpu while its op is parsed) borrows the next one.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

namespace torch_tpu::eager {

template <typename T>
class PerThreadLease {
 public:
  PerThreadLease() {
    std::vector<std::unique_ptr<T>>& p = pool();
    if (depth() == p.size()) p.push_back(std::make_unique<T>());
    item_ = p[depth()++].get();
  }
  ~PerThreadLease() { --depth(); }
  PerThreadLease(const PerThreadLease&) = delete;
  PerThreadLease& operator=(const PerThreadLease&) = delete;
  T& operator*() const { return *item_; }
  T* operator->() const { return item_; }

 private:
  static std::vector<std::unique_ptr<T>>& pool() {
    thread_local std::vector<std::unique_ptr<T>> p;
    return p;
  }
  static size_t& depth() {
    thread_local size_t d = 0;
    return d;
  }
  T* item_;
};

}  // namespace torch_tpu::eager
