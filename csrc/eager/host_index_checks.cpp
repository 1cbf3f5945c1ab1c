#include "eager/host_index_checks.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ops/count_nonzero.h>
#include <ATen/ops/aminmax.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "device/storage_slot.h"

namespace torch_tpu::eager {
namespace {

// Index lists are small; a large upload is data, not worth a host copy.
constexpr size_t kMaxRememberedBytes = 64 << 10;
constexpr size_t kMaxRemembered = 256;

// The host copy of an upload stays valid while the storage holds that very
// buffer: buffers are immutable and every write installs a new one.
struct Remembered {
  std::weak_ptr<pjrt::Buffer> buffer;
  at::Tensor values;  // dense CPU copy, laid out as the storage
};

struct Uploads {
  std::mutex mu;
  std::unordered_map<const pjrt::Buffer*, Remembered> by_buffer;
  std::deque<const pjrt::Buffer*> order;  // oldest first (may name forgotten entries)

  void make_room() {
    if (by_buffer.size() < kMaxRemembered) return;
    for (auto it = by_buffer.begin(); it != by_buffer.end();)
      it = it->second.buffer.expired() ? by_buffer.erase(it) : std::next(it);
    std::deque<const pjrt::Buffer*> kept;
    for (const pjrt::Buffer* k : order)
      if (by_buffer.count(k)) kept.push_back(k);
    order.swap(kept);
    while (by_buffer.size() >= kMaxRemembered && !order.empty()) {
      by_buffer.erase(order.front());
      order.pop_front();
    }
  }
};

Uploads& uploads() {
  static auto* u = new Uploads();
  return *u;
}

bool is_tpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }
bool is_mask(const at::Tensor& t) { return t.scalar_type() == at::kByte || t.scalar_type() == at::kBool; }
bool is_index_dtype(c10::ScalarType s) { return s == at::kLong || s == at::kInt || s == at::kByte || s == at::kBool; }

std::optional<std::vector<int64_t>> broadcast(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> r(rank, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = r[rank - s.size() + i];
      if (s[i] == d || s[i] == 1) continue;
      if (d != 1) return std::nullopt;
      d = s[i];
    }
  return r;
}

// The shape of self[indices]: the broadcast index shape replaces the indexed
// dims where they are adjacent, and goes first where they are not.
std::vector<int64_t> result_shape(const at::Tensor& self, const std::vector<int64_t>& indexed,
                                  const std::vector<int64_t>& batch) {
  int64_t front = indexed.front(), back = indexed.back();
  bool adjacent = back - front + 1 == static_cast<int64_t>(indexed.size());
  std::vector<int64_t> r = adjacent ? std::vector<int64_t>(self.sizes().begin(), self.sizes().begin() + front) : batch;
  if (adjacent) r.insert(r.end(), batch.begin(), batch.end());
  for (int64_t d = adjacent ? back + 1 : 0; d < self.dim(); ++d)
    if (adjacent || std::find(indexed.begin(), indexed.end(), d) == indexed.end()) r.push_back(self.size(d));
  return r;
}

// An integer index the host knows, and where the CPU's kernel reports it.
struct KnownIndex {
  int64_t tensor_position;  // among the (mask-expanded) index tensors: the CPU's "dimension"
  int64_t size;             // of the self dim it indexes
  at::Tensor values;        // int64, on the CPU
};

// The CPU kernel walks the broadcast index elements in order and, for each,
// the index tensors in order: the first bad pair is the one it reports.
void check_bounds(const std::vector<KnownIndex>& known, const std::vector<int64_t>& batch) {
  bool any_bad = false;
  for (const KnownIndex& k : known) {
    if (k.values.numel() == 0) continue;
    auto [lo, hi] = at::aminmax(k.values);
    any_bad |= lo.item<int64_t>() < -k.size || hi.item<int64_t>() >= k.size;
  }
  if (!any_bad) return;
  std::vector<at::Tensor> flat;
  for (const KnownIndex& k : known) flat.push_back(k.values.expand(batch).contiguous().view(-1));
  int64_t n = flat.front().numel();
  for (int64_t e = 0; e < n; ++e)
    for (size_t k = 0; k < known.size(); ++k) {
      int64_t v = flat[k].const_data_ptr<int64_t>()[e], size = known[k].size;
      TORCH_CHECK_INDEX(v >= -size && v < size, "index ", v, " is out of bounds for dimension ",
                        known[k].tensor_position, " with size ", size);
    }
}

}  // namespace

void remember_uploaded_values(const at::Tensor& dst, const at::Tensor& host) {
  if (!at::isIntegralType(host.scalar_type(), /*includeBool=*/true) || host.numel() == 0 ||
      host.nbytes() > kMaxRememberedBytes)
    return;
  const std::shared_ptr<pjrt::Buffer>& buffer = device::slot_of(*dst.unsafeGetTensorImpl()).buffer();
  if (!buffer) return;
  at::Tensor copy = host.clone(at::MemoryFormat::Contiguous);  // the caller may change its tensor later
  Uploads& u = uploads();
  std::lock_guard<std::mutex> lock(u.mu);
  u.make_room();
  u.by_buffer[buffer.get()] = Remembered{buffer, std::move(copy)};
  u.order.push_back(buffer.get());
}

at::Tensor host_known_values(const at::Tensor& index) {
  if (index.device().is_cpu()) return index;
  if (!is_tpu(index)) return {};
  device::StorageSlot& slot = device::slot_of(*index.unsafeGetTensorImpl());
  // Deferred by a fused window: not a buffer uploaded from the host as it is
  // (and an index check must not force the window to run).
  if (slot.in_fused_window) return {};
  const std::shared_ptr<pjrt::Buffer>& buffer = slot.raw_buffer();
  if (!buffer) return {};
  Uploads& u = uploads();
  std::lock_guard<std::mutex> lock(u.mu);
  auto it = u.by_buffer.find(buffer.get());
  if (it == u.by_buffer.end() || it->second.buffer.lock() != buffer) return {};
  const at::Tensor& v = it->second.values;
  if (v.scalar_type() != index.scalar_type() || v.nbytes() != index.storage().nbytes()) return {};
  return v.as_strided(index.sizes(), index.strides(), index.storage_offset());
}

void check_index_list(const at::Tensor& self, const std::vector<at::Tensor>& indices, const at::Tensor& values) {
  // In the order of the CPU's index/index_put: count, dtypes, masks, broadcast, values, bounds.
  TORCH_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", indices.size(), ")");
  for (const at::Tensor& i : indices)
    TORCH_CHECK_INDEX(!i.defined() || is_index_dtype(i.scalar_type()),
                      "tensors used as indices must be long, int, byte or bool tensors");
  std::vector<std::vector<int64_t>> shapes;  // of the index tensors after mask expansion
  std::vector<int64_t> indexed;              // the self dims they index
  std::vector<KnownIndex> known;
  bool counts_known = true;
  int64_t dim = 0;
  for (const at::Tensor& i : indices) {
    if (!i.defined()) {
      ++dim;
      continue;
    }
    if (!is_mask(i)) {
      at::Tensor host = host_known_values(i);
      if (host.defined())
        known.push_back(KnownIndex{static_cast<int64_t>(shapes.size()), self.size(dim), host.to(at::kLong)});
      shapes.push_back(i.sizes().vec());
      indexed.push_back(dim++);
      continue;
    }
    if (i.scalar_type() == at::kByte)
      TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
    for (int64_t j = 0; j < i.dim(); ++j) {
      int64_t d = dim + j;
      TORCH_CHECK_INDEX(d < self.dim(), "Dimension out of range (expected to be in range of [", -self.dim(), ", ",
                        self.dim() - 1, "], but got ", d, ")");
      TORCH_CHECK_INDEX(i.size(j) == self.size(d), "The shape of the mask ", i.sizes(), " at index ", j,
                        " does not match the shape of the indexed tensor ", self.sizes(), " at index ", d);
    }
    // A mask stands for its true elements' coordinates: their count is known
    // only when its values are.
    at::Tensor host = host_known_values(i);
    int64_t count = host.defined() ? at::count_nonzero(host).item<int64_t>() : -1;
    counts_known &= count >= 0;
    for (int64_t j = 0; j < i.dim(); ++j) {
      shapes.push_back({count});
      indexed.push_back(dim++);
    }
  }
  // A mask counted on the device: nonzero runs first (index) or the rule
  // handles it (index_put); these checks are made on what follows.
  if (!counts_known || shapes.empty()) return;
  std::optional<std::vector<int64_t>> batch = broadcast(shapes);
  if (!batch) {
    std::string list;
    for (const auto& s : shapes) list += (list.empty() ? "" : ", ") + c10::str(c10::IntArrayRef(s));
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ", list);
  }
  if (values.defined()) {
    std::vector<int64_t> result = result_shape(self, indexed, *batch);
    TORCH_CHECK(at::is_expandable_to(values.sizes(), result), "shape mismatch: value tensor of shape ",
                values.sizes(), " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(result));
  }
  // No index fits an empty dim; otherwise the CPU checks indices as it reads
  // the result's elements, so an empty result checks none.
  bool empty_batch = std::find(batch->begin(), batch->end(), 0) != batch->end();
  for (int64_t d : indexed)
    TORCH_CHECK_INDEX(self.size(d) > 0 || empty_batch, "index is out of bounds for dimension with size 0");
  int64_t result_numel = c10::multiply_integers(*batch);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(indexed.begin(), indexed.end(), d) == indexed.end()) result_numel *= self.size(d);
  if (!known.empty() && result_numel > 0) check_bounds(known, *batch);
}

void check_index_call(const std::string& op, const torch::jit::Stack& stack, size_t first) {
  bool read = op == "index.Tensor" || op == "index.Tensor_out";
  bool write = op.rfind("index_put", 0) == 0 || op.rfind("_index_put_impl", 0) == 0;
  if (!read && !write) return;
  std::vector<at::Tensor> indices;
  for (const c10::IValue& e : stack[first + 1].toListRef())
    indices.push_back(e.isTensor() ? e.toTensor() : at::Tensor());
  check_index_list(stack[first].toTensor(), indices, write ? stack[first + 2].toTensor() : at::Tensor());
}

}  // namespace torch_tpu::eager
