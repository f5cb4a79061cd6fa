// The compiled half of the gpuclean Python package; the Python half (python/gpuclean/) wraps it.

#include "python/src/bindings.hpp"

PYBIND11_MODULE(_gpuclean, m) {
  m.doc() = "gpuclean's C++ core (use the gpuclean package, not this module)";
  gpuclean::python::bind_errors(m);
  gpuclean::python::bind_clean(m);
  gpuclean::python::bind_outer_loop(m);
  gpuclean::python::bind_fits(m);
  gpuclean::python::bind_select_cpu(m);
  gpuclean::python::bind_select_gpu(m);
}
