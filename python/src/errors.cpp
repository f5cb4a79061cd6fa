// C++ exceptions become the Python exceptions of gpuclean.errors, chosen by the exit-code class
// the command line would exit with (app::classify), with the command line's one-line message.

#include "app/failure.hpp"
#include "python/src/bindings.hpp"

namespace gpuclean::python {

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;  // a Python exception on its way back: pybind11 restores it
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (cast errors, index errors, ...)
    } catch (...) {
      const app::Failure f = app::classify(std::current_exception());
      const char* name = "InternalError";
      switch (f.code) {
        case app::ExitCode::kUsage: name = "UsageError"; break;
        case app::ExitCode::kInput: name = "InputError"; break;
        case app::ExitCode::kRuntime: name = "RunFailure"; break;
        default: break;
      }
      const py::object type = py::module_::import("gpuclean.errors").attr(name);
      PyErr_SetString(type.ptr(), f.message.c_str());
    }
  });
}

}  // namespace gpuclean::python
