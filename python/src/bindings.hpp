#pragma once
// The pieces of the _gpuclean extension module, one file each. Only gpuclean's own headers are
// included by these files (no CFITSIO, CLI11 or JSON headers), so that the module builds on a
// machine that has the prebuilt static libraries and the repository, but not those packages.

#include <cstddef>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace gpuclean::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_clean(py::module_& m);
void bind_outer_loop(py::module_& m);  ///< the WSClean hook's session
void bind_fits(py::module_& m);
void bind_select_cpu(py::module_& m);
void bind_select_gpu(py::module_& m);  ///< GPU entry points; reports no GPU in a CPU-only build

/// A NumPy array that takes over `values` (no copy), shaped `shape` (C order).
template <class T>
py::array_t<T> adopt(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owned->data(), free_when_done);
}

/// The stored axes when they describe a width x height plane (WSClean's N x N x 1 x 1), else {width, height}.
inline std::vector<long> plane_axes(std::vector<long> axes, std::size_t width, std::size_t height) {
  const bool match = axes.size() >= 2 && axes[0] == static_cast<long>(width) && axes[1] == static_cast<long>(height);
  return match ? axes : std::vector<long>{static_cast<long>(width), static_cast<long>(height)};
}

/// A C-contiguous float32 array's elements (NumPy casts and copies only when it must).
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

}  // namespace gpuclean::python
