#include "distributed/rank_agreement.h"

#include <c10/util/Exception.h>

#include <sstream>

namespace torch_tpu::distributed {

namespace {

// One rank's row: a fixed header, then (pairwise) the send and receive counts.
enum Word : int64_t {
  kOp, kRoot, kReduceOp, kCount, kDtype, kNdim, kSize0,
  kNumel = kSize0 + 6, kShapeHash, kDtypeHash, kHeader
};
constexpr int64_t kShownDims = kNumel - kSize0;

// The words the ranks must agree on, by what a mismatch means; the others
// describe the first tensor for messages. signature_digest hashes exactly
// these, so a digest that matches is a check that would pass.
struct Compared {
  Word words[3];
  int count;
  const char* what;
};
constexpr Compared kCompared[] = {
    {{kOp, kRoot, kReduceOp}, 3, "the collective, its root or its reduction"},
    {{kCount, kDtypeHash}, 2, "the number or dtypes of the tensors"},
    {{kNumel, kShapeHash}, 2, "the tensors' shapes"},
};

int64_t mix(int64_t h, int64_t v) {
  uint64_t x = static_cast<uint64_t>(h) ^ static_cast<uint64_t>(v);
  x *= 1099511628211ULL;
  return static_cast<int64_t>(x ^ (x >> 29));
}

std::vector<int64_t> row_of(const OpSignature& sig, int size) {
  std::vector<int64_t> row(kHeader + 2 * size, 0);
  row[kOp] = static_cast<int64_t>(sig.op);
  row[kRoot] = sig.root;
  row[kReduceOp] = sig.reduce_op;
  row[kCount] = static_cast<int64_t>(sig.tensors.size());
  row[kDtype] = -1;
  int64_t shape_hash = 17, dtype_hash = 17, numel = 0;
  for (size_t i = 0; i < sig.tensors.size(); ++i) {
    const at::Tensor& t = sig.tensors[i];
    if (i == 0) {
      row[kDtype] = static_cast<int64_t>(t.scalar_type());
      row[kNdim] = t.dim();
      for (int64_t d = 0; d < std::min<int64_t>(t.dim(), kShownDims); ++d) row[kSize0 + d] = t.size(d);
    }
    dtype_hash = mix(dtype_hash, static_cast<int64_t>(t.scalar_type()));
    shape_hash = mix(shape_hash, t.dim());
    for (int64_t s : t.sizes()) shape_hash = mix(shape_hash, s);
    numel += t.numel();
  }
  row[kNumel] = numel;
  row[kShapeHash] = sig.match == OpSignature::Match::Shapes ? shape_hash : 0;
  row[kDtypeHash] = dtype_hash;
  if (sig.match == OpSignature::Match::Pairwise) {
    for (int r = 0; r < size; ++r) {
      row[kHeader + r] = sig.send_elems.at(r);
      row[kHeader + size + r] = sig.recv_elems.at(r);
    }
    row[kNumel] = 0;  // uneven splits: element counts differ by design
  }
  return row;
}

std::string describe(const int64_t* row) {
  std::ostringstream os;
  os << c10d::opTypeToString(static_cast<c10d::OpType>(row[kOp]));
  if (row[kRoot] >= 0) os << " (root " << row[kRoot] << ")";
  if (row[kCount] == 0) return os.str();
  os << " with " << c10::toString(static_cast<c10::ScalarType>(row[kDtype])) << "[";
  for (int64_t d = 0; d < std::min<int64_t>(row[kNdim], kShownDims); ++d) os << (d ? ", " : "") << row[kSize0 + d];
  if (row[kNdim] > kShownDims) os << ", ...";
  os << "]";
  if (row[kCount] > 1) os << " and " << row[kCount] - 1 << " more tensor(s), " << row[kNumel] << " elements in all";
  return os.str();
}

[[noreturn]] void raise(const std::string& op, const std::string& what, const at::Tensor& rows) {
  std::ostringstream os;
  os << "tpu_dist " << op << ": the ranks disagree on " << what << "; every rank must call the same collective";
  os << " with matching tensors (this one is not run). ";
  for (int64_t r = 0; r < rows.size(0); ++r) os << (r ? "; " : "") << "rank " << r << ": " << describe(rows[r].data_ptr<int64_t>());
  C10_THROW_ERROR(DistBackendError, os.str());
}

}  // namespace

uint64_t signature_digest(const OpSignature& sig, int size, bool with_splits) {
  const std::vector<int64_t> row = row_of(sig, size);
  int64_t h = 17;
  for (const Compared& c : kCompared)
    for (int i = 0; i < c.count; ++i) h = mix(h, row[c.words[i]]);
  if (with_splits)
    for (size_t w = kHeader; w < row.size(); ++w) h = mix(h, row[w]);
  return static_cast<uint64_t>(h);
}

void check_rank_agreement(CollectiveTransport& transport, int size, const OpSignature& sig) {
  std::vector<int64_t> mine = row_of(sig, size);
  at::Tensor row = at::from_blob(mine.data(), {static_cast<int64_t>(mine.size())}, at::kLong).clone();
  at::Tensor rows = transport.allgather_host_int64(row).contiguous();
  const std::string op = c10d::opTypeToString(sig.op);
  const int64_t width = rows.size(1);
  const int64_t* base = rows.data_ptr<int64_t>();
  auto at = [&](int r, int64_t w) { return base[r * width + w]; };
  for (int r = 0; r < size; ++r)
    for (const Compared& c : kCompared)
      for (int i = 0; i < c.count; ++i)
        if (at(r, c.words[i]) != at(0, c.words[i])) raise(op, c.what, rows);
  if (sig.match != OpSignature::Match::Pairwise) return;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) {
      const int64_t sent = at(i, kHeader + j), expected = at(j, kHeader + size + i);
      if (sent != expected) {
        std::ostringstream what;
        what << "the split sizes (rank " << i << " sends " << sent << " elements to rank " << j << ", which expects "
             << expected << ")";
        raise(op, what.str(), rows);
      }
    }
  }
}

}  // namespace torch_tpu::distributed
