// gpuclean.select on host arrays: the CPU reference, which defines the library's semantics.

#include <stdexcept>
#include <string>

#include <pybind11/stl.h>

#include "python/src/bindings.hpp"
#include "python/src/order_names.hpp"
#include "clean/quantiles.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::python {
namespace {

std::span<const float> span_of(const FloatArray& a) { return {a.data(), static_cast<std::size_t>(a.size())}; }

py::tuple top_k(const FloatArray& values, std::size_t k, const std::string& order, bool sorted) {
  const select::SelectRequest request{k, parse_order(order), sorted};
  select::TopK result;
  {
    py::gil_scoped_release release;
    result = select::top_k_cpu(span_of(values), request);
  }
  const auto n = static_cast<py::ssize_t>(result.values.size());
  return py::make_tuple(adopt(std::move(result.values), {n}), adopt(std::move(result.indices), {n}));
}

py::array_t<float> order_statistics(const FloatArray& values, const std::vector<std::size_t>& ranks) {
  std::vector<float> out;
  {
    py::gil_scoped_release release;
    out = select::multiselect_cpu(span_of(values), ranks);
  }
  const auto n = static_cast<py::ssize_t>(out.size());
  return adopt(std::move(out), {n});
}

}  // namespace

void bind_select_cpu(py::module_& m) {
  m.def("top_k_cpu", &top_k, py::arg("values"), py::arg("k"), py::arg("order"), py::arg("sorted"));
  // The library's own refusal of k > n, for the GPU path to call before it allocates k outputs.
  m.def("check_top_k", [](std::size_t n, std::size_t k) { select::check_top_k(n, {k}); }, py::arg("n"), py::arg("k"));
  m.def("order_statistics_cpu", &order_statistics, py::arg("values"), py::arg("ranks"));
  m.def("quantile_ranks", &clean::quantile_ranks, py::arg("qs"), py::arg("n_valid"));
}

}  // namespace gpuclean::python
