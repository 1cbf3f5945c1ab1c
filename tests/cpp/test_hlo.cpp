// The StableHLO emitter and the view lowering, checked by compiling and
// running their programs on the PJRT plugin: no torch involved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "hlo/builder.h"
#include "ops/view_lowering.h"
#include "pjrt_test_env.h"

namespace torch_tpu {
namespace {

using hlo::Builder;
using hlo::DType;
using hlo::TensorType;
using hlo::Value;
using pjrt::testing::shared_client;

pjrt::ElementType pjrt_type(DType d) {
  switch (d) {
    case DType::F32: return pjrt::ElementType::F32;
    case DType::I64: return pjrt::ElementType::S64;
    case DType::I32: return pjrt::ElementType::S32;
    case DType::U8: return pjrt::ElementType::U8;
    case DType::Pred: return pjrt::ElementType::Pred;
    default: throw std::runtime_error("test: unsupported dtype");
  }
}

template <typename T>
std::shared_ptr<pjrt::Buffer> upload(const std::vector<T>& data, const TensorType& t) {
  auto client = shared_client();
  return pjrt::Buffer::from_host(*client, data.data(), pjrt_type(t.dtype), t.dims,
                                 client->addressable_devices()[0]);
}

template <typename T>
std::vector<T> download(pjrt::Buffer& b, int64_t n) {
  std::vector<T> out(n);
  b.to_host(out.data(), n * sizeof(T));
  return out;
}

std::vector<std::shared_ptr<pjrt::Buffer>> run(const std::string& text,
                                               const std::vector<pjrt::Buffer*>& args) {
  auto client = shared_client();
  auto exe = pjrt::Executable::compile(client, text);
  auto r = exe->execute(args, client->addressable_devices()[0]);
  r.done.await();
  return r.outputs;
}

std::vector<float> iota_f(int64_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

TEST(HloBuilder, PrintsGenericOpsAndTypes) {
  Builder b;
  Value x = b.parameter(TensorType(DType::F32, {2, 3}), 0);
  Value y = b.negate(x);
  std::string text = b.finish({y});
  EXPECT_NE(text.find("%arg0: tensor<2x3xf32> {tf.aliasing_output = 0 : i32}"), std::string::npos) << text;
  EXPECT_NE(text.find("\"stablehlo.negate\"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>"), std::string::npos);
  EXPECT_EQ(TensorType(DType::Pred, {}).str(), "tensor<i1>");
  EXPECT_EQ(TensorType(DType::U8, {0, 4}).str(), "tensor<0x4xui8>");
  EXPECT_THROW(b.add(x, b.parameter(TensorType(DType::F32, {3}))), std::invalid_argument);
}

TEST(HloBuilder, ArithmeticBroadcastConvert) {
  TPU_PJRT_REQUIRE_PLUGIN();
  Builder b;
  Value x = b.parameter(TensorType(DType::F32, {2, 3}));
  Value s = b.parameter(TensorType(DType::F32, {3}));
  Value y = b.add(b.multiply(x, b.broadcast_to(s, {2, 3})), b.splat_float(x.type, 0.5));
  Value z = b.convert(y, DType::I32);
  auto xb = upload(iota_f(6), x.type);
  auto sb = upload(std::vector<float>{1, 2, 3}, s.type);
  auto out = run(b.finish({y, z}), {xb.get(), sb.get()});
  EXPECT_EQ(download<float>(*out[0], 6), (std::vector<float>{0.5, 2.5, 6.5, 3.5, 8.5, 15.5}));
  EXPECT_EQ(download<int32_t>(*out[1], 6), (std::vector<int32_t>{0, 2, 6, 3, 8, 15}));
}

TEST(HloBuilder, ConstantsKeepEveryBit) {
  TPU_PJRT_REQUIRE_PLUGIN();
  Builder b;
  Value nan = b.constant_float(DType::F32, std::nan(""));
  Value negzero = b.constant_float(DType::F32, -0.0);
  Value big = b.constant_int(DType::I64, int64_t{1} << 60);
  Value t = b.convert(b.constant_int(DType::I32, 7), DType::Pred);
  auto out = run(b.finish({nan, negzero, big, t}), {});
  EXPECT_TRUE(std::isnan(download<float>(*out[0], 1)[0]));
  EXPECT_TRUE(std::signbit(download<float>(*out[1], 1)[0]));
  EXPECT_EQ(download<int64_t>(*out[2], 1)[0], int64_t{1} << 60);
  EXPECT_EQ(download<uint8_t>(*out[3], 1)[0], 1);
}

TEST(HloBuilder, SlicesGatherScatterReduce) {
  TPU_PJRT_REQUIRE_PLUGIN();
  Builder b;
  Value x = b.parameter(TensorType(DType::F32, {8}));
  Value off = b.parameter(TensorType(DType::I64, {}));
  Value sl = b.slice(x, {1}, {8}, {3});                       // 1, 4, 7
  Value ds = b.dynamic_slice(x, {off}, {2});                  // x[off:off+2]
  Value dus = b.dynamic_update_slice(x, b.splat_float(TensorType(DType::F32, {2}), -1), {off});
  TensorType it(DType::I64, {3});
  Value idx = b.multiply(b.iota(it, 0), b.splat_int(it, 2));  // 0, 2, 4
  Value g = b.gather_elements_1d(x, idx);
  Value sc = b.scatter_elements_1d(x, idx, b.splat_float(TensorType(DType::F32, {3}), 9));
  Value sum = b.reduce({x}, {b.constant_float(DType::F32, 0)}, {0},
                       [](Builder& r, const std::vector<Value>& a) { return std::vector<Value>{r.add(a[0], a[1])}; })[0];
  auto xb = upload(iota_f(8), x.type);
  auto ob = upload(std::vector<int64_t>{5}, off.type);
  auto out = run(b.finish({sl, ds, dus, g, sc, sum}), {xb.get(), ob.get()});
  EXPECT_EQ(download<float>(*out[0], 3), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(download<float>(*out[1], 2), (std::vector<float>{5, 6}));
  EXPECT_EQ(download<float>(*out[2], 8), (std::vector<float>{0, 1, 2, 3, 4, -1, -1, 7}));
  EXPECT_EQ(download<float>(*out[3], 3), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(download<float>(*out[4], 8), (std::vector<float>{9, 1, 9, 3, 9, 5, 6, 7}));
  EXPECT_EQ(download<float>(*out[5], 1), (std::vector<float>{28}));
}

// Reference: element i of a strided view over a flat array.
std::vector<float> strided_ref(const std::vector<float>& base, const std::vector<int64_t>& sizes,
                               const std::vector<int64_t>& strides, int64_t offset) {
  std::vector<float> out;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, pos = offset;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      pos += (rem % sizes[d]) * strides[d];
      rem /= sizes[d];
    }
    out.push_back(base[pos]);
  }
  return out;
}

struct ViewCase {
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  ops::ViewAccess access;
};

TEST(ViewLowering, ReadAndWriteMatchStridedIndexing) {
  TPU_PJRT_REQUIRE_PLUGIN();
  TensorType base_t(DType::F32, {4, 6});
  std::vector<ViewCase> cases = {
      {{4, 6}, {6, 1}, 0, ops::ViewAccess::Whole},       // the base itself
      {{6, 4}, {1, 6}, 0, ops::ViewAccess::Strided},     // .t()
      {{4, 2}, {6, 1}, 1, ops::ViewAccess::Strided},     // x[:, 1:3]
      {{2, 3}, {12, 2}, 3, ops::ViewAccess::Strided},    // x[::2, 3::2]
      {{5}, {1}, 19, ops::ViewAccess::Strided},          // flat tail
      {{3, 4}, {0, 6}, 2, ops::ViewAccess::Strided},     // expand of a column (read only)
      {{2, 2}, {7, 7}, 0, ops::ViewAccess::Gather},      // overlapping walk
      {{4}, {7}, 0, ops::ViewAccess::Strided},           // diagonal
      {{2, 2}, {5, 3}, 1, ops::ViewAccess::Gather},      // strides that do not nest
  };
  std::vector<float> base = iota_f(24);
  for (const ViewCase& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.sizes) + " " + ::testing::PrintToString(c.strides));
    ops::ViewGeometry v{DType::F32, c.sizes, c.strides};
    EXPECT_EQ(ops::classify_view(base_t, v), c.access);
    Builder b;
    Value bp = b.parameter(base_t);
    Value off = b.parameter(TensorType(DType::I64, {}));
    Value read = ops::read_view(b, bp, v, off);
    std::vector<Value> results{read};
    bool writable = true;
    for (size_t d = 0; d < c.sizes.size(); ++d) writable &= !(c.sizes[d] > 1 && c.strides[d] == 0);
    bool overlapping = c.access == ops::ViewAccess::Gather && c.strides == std::vector<int64_t>{7, 7};
    if (writable && !overlapping) {
      Value neg = b.negate(b.add(read, b.splat_float(read.type, 100)));
      results.push_back(ops::write_view(b, bp, v, off, neg));
    }
    auto bb = upload(base, base_t);
    auto ob = upload(std::vector<int64_t>{c.offset}, TensorType(DType::I64, {}));
    auto out = run(b.finish(results), {bb.get(), ob.get()});
    std::vector<float> want = strided_ref(base, c.sizes, c.strides, c.offset);
    EXPECT_EQ(download<float>(*out[0], static_cast<int64_t>(want.size())), want);
    if (results.size() > 1) {
      std::vector<float> expect = base;
      int64_t n = static_cast<int64_t>(want.size());
      for (int64_t i = 0; i < n; ++i) {
        int64_t rem = i, pos = c.offset;
        for (int64_t d = static_cast<int64_t>(c.sizes.size()) - 1; d >= 0; --d) {
          pos += (rem % c.sizes[d]) * c.strides[d];
          rem /= c.sizes[d];
        }
        expect[pos] = -(base[pos] + 100);
      }
      EXPECT_EQ(download<float>(*out[1], 24), expect);
    }
  }
}

TEST(ViewLowering, ReinterpretsBytesOfAnotherDtype) {
  TPU_PJRT_REQUIRE_PLUGIN();
  // A uint8 storage read as float32 (what torch.load's byte storages need).
  std::vector<float> vals{1.5f, -2.f, 3.25f};
  std::vector<uint8_t> bytes(12);
  std::memcpy(bytes.data(), vals.data(), 12);
  TensorType base_t(DType::U8, {12});
  Builder b;
  Value bp = b.parameter(base_t);
  Value off = b.parameter(TensorType(DType::I64, {}));
  ops::ViewGeometry v{DType::F32, {2}, {1}};
  Value read = ops::read_view(b, bp, v, off);
  Value written = ops::write_view(b, bp, v, off, b.splat_float(read.type, 8.f));
  auto bb = upload(bytes, base_t);
  auto ob = upload(std::vector<int64_t>{1}, TensorType(DType::I64, {}));
  auto out = run(b.finish({read, written}), {bb.get(), ob.get()});
  EXPECT_EQ(download<float>(*out[0], 2), (std::vector<float>{-2.f, 3.25f}));
  std::vector<uint8_t> got = download<uint8_t>(*out[1], 12);
  std::vector<float> back(3);
  std::memcpy(back.data(), got.data(), 12);
  EXPECT_EQ(back, (std::vector<float>{1.5f, 8.f, 8.f}));
}

}  // namespace
}  // namespace torch_tpu
