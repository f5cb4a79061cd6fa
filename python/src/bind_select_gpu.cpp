// gpuclean.select on CUDA arrays: the registry's backends on the caller's device pointers and
// stream. Python allocates the outputs with the caller's array library (CuPy, PyTorch), so the
// results come back as that library's device arrays and nothing crosses to the host but counts.

#include <cstdint>
#include <string>

#include <pybind11/stl.h>

#include "python/src/bindings.hpp"
#include "python/src/order_names.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gpuclean::python {
namespace {

cudaStream_t stream_of(std::uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }

/// Runs on the array's device and gives the caller's thread its current device back.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    cudaGetDevice(&previous_);
    cuda::set_device(device);
    cuda::keep_pool_memory();  // the per-call workspaces are stream-ordered: repeated calls reuse the pool
  }
  ~OnDevice() { cudaSetDevice(previous_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};
const float* floats_at(std::uintptr_t p) { return reinterpret_cast<const float*>(p); }

/// Writes min(k, n_valid) (value, index) pairs to the output pointers (room for k each); returns the count.
std::size_t top_k(const std::string& backend, std::uintptr_t d_in, std::size_t n, std::size_t k,
                  const std::string& order, bool sorted, std::uintptr_t stream, int device, std::uintptr_t d_values,
                  std::uintptr_t d_indices) {
  const select::SelectRequest request{k, parse_order(order), sorted};
  py::gil_scoped_release release;
  const OnDevice on(device);
  const auto selector = select::builtin_registry().make(backend);
  select::Workspace workspace(stream_of(stream));
  return selector
      ->top_k(stream_of(stream), floats_at(d_in), n, request, workspace, reinterpret_cast<float*>(d_values),
              reinterpret_cast<std::uint32_t*>(d_indices))
      .count;
}

std::vector<float> order_statistics(const std::string& backend, std::uintptr_t d_in, std::size_t n,
                                    const std::vector<std::size_t>& ranks, std::uintptr_t stream, int device) {
  std::vector<float> out(ranks.size());
  if (ranks.empty()) return out;
  py::gil_scoped_release release;
  const OnDevice on(device);
  const auto selector = select::builtin_registry().make(backend);
  select::Workspace workspace(stream_of(stream));
  selector->order_statistics(stream_of(stream), floats_at(d_in), n, ranks, workspace, out.data());
  return out;
}

}  // namespace

void bind_select_gpu(py::module_& m) {
  m.attr("built_with_cuda") = true;
  m.def("has_gpu", [] { return cuda::has_usable_device(); });
  m.def("describe_device", [] { return cuda::describe_device(); });
  m.def("backends", [] { return select::builtin_registry().names(); });
  m.def("exact_backends", [] {
    std::vector<std::string> exact;
    for (const std::string& name : select::builtin_registry().names())
      if (select::builtin_registry().make(name)->exact()) exact.push_back(name);
    return exact;
  });
  m.def("top_k_gpu", &top_k, py::arg("backend"), py::arg("d_in"), py::arg("n"), py::arg("k"), py::arg("order"),
        py::arg("sorted"), py::arg("stream"), py::arg("device"), py::arg("d_values"), py::arg("d_indices"));
  m.def("order_statistics_gpu", &order_statistics, py::arg("backend"), py::arg("d_in"), py::arg("n"),
        py::arg("ranks"), py::arg("stream"), py::arg("device"));
}

}  // namespace gpuclean::python
