// A CPU-only build: no GPU backends; gpuclean.select refuses CUDA arrays with a clear message.

#include <pybind11/stl.h>

#include "python/src/bindings.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::python {

void bind_select_gpu(py::module_& m) {
  m.attr("built_with_cuda") = false;
  m.def("has_gpu", [] { return false; });
  m.def("describe_device", [] { return cuda::describe_device(); });
  m.def("backends", [] { return std::vector<std::string>{}; });
  m.def("exact_backends", [] { return std::vector<std::string>{}; });
}

}  // namespace gpuclean::python
