// The floor under a strict-mode eager op: one PJRT execute of a cached
// program adding two 16-element float32 buffers, through torch_tpu's own PJRT
// layer with nothing of PyTorch around it. bench/eager_overhead.py runs it.
//
//   bench_pjrt_execute PLUGIN.so [REPEATS]
//
// Each sample chains 100000 executes (x = x + b: each waits on the one
// before, as chained eager ops do) and one read at the end; prints the
// median and the range of microseconds per execute over REPEATS samples.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "pjrt/pjrt.h"

using namespace torch_tpu::pjrt;

namespace {

const char kAdd[] = R"mlir(
module @m {
  func.func public @main(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
    %0 = stablehlo.add %a, %b : tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
)mlir";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  const int n = 100000;
  auto client = Client::create(Api::load(argv[1]));
  const Device& device = client->addressable_devices().at(0);
  auto exe = Executable::compile(client, kAdd);
  std::vector<float> host(16, 1.0f);
  auto x = Buffer::from_host(*client, host.data(), ElementType::F32, {16}, device);
  auto b = Buffer::from_host(*client, host.data(), ElementType::F32, {16}, device);
  std::vector<double> us;
  for (int s = 0; s <= repeats; ++s) {  // sample 0 warms up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) x = exe->execute({x.get(), b.get()}, device).outputs[0];
    x->to_host(host.data(), host.size() * sizeof(float));
    const double per = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
    if (s > 0) us.push_back(per);
  }
  const float expected = 1.0f + static_cast<float>(n) * (repeats + 1);
  if (host[0] != expected) {  // the chain really ran
    std::fprintf(stderr, "wrong result %g, expected %g\n", host[0], expected);
    return 1;
  }
  std::sort(us.begin(), us.end());
  std::printf("pjrt execute: median %.2f us (%.2f-%.2f) per execute, %d samples of %d\n", us[us.size() / 2],
              us.front(), us.back(), repeats, n);
  return 0;
}
