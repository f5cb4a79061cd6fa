// CPU-only build: the selection benchmark needs the GPU backends.

#include "app/bench/bench_select.hpp"
#include "app/errors.hpp"

namespace gpuclean::app {
int run_bench_select(const BenchSelectOptions&) {
  throw RuntimeFailure("bench select needs a CUDA build of gpuclean; this one was built without nvcc");
}
}  // namespace gpuclean::app
