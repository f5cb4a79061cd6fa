#include "app/failure.hpp"

#include <filesystem>
#include <new>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "app/errors.hpp"
#include "clean/errors.hpp"
#include "io/fits_error.hpp"
#include "io/ms/ms_error.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "select/cuda/cuda_check.hpp"
#endif

namespace gpuclean::app {
namespace {

Failure one_line(ExitCode code, std::string message) {
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return {code, std::move(message)};
}

}  // namespace

Failure classify(std::exception_ptr error) {
  using io::FitsError;
  try {
    std::rethrow_exception(error);
  } catch (const clean::InvalidSettings& e) {
    return one_line(ExitCode::kUsage, e.what());
  } catch (const io::ms::MsError& e) {
    return one_line(e.kind() == io::ms::MsError::Kind::kBusy ? ExitCode::kBusy : ExitCode::kInput, e.what());
  } catch (const clean::InvalidInput& e) {
    return one_line(ExitCode::kInput, e.what());
  } catch (const FitsError& e) {
    switch (e.kind()) {
      case FitsError::Kind::kInput: return one_line(ExitCode::kInput, e.what());
      case FitsError::Kind::kExists: return one_line(ExitCode::kUsage, e.what());
      case FitsError::Kind::kOutput: return one_line(ExitCode::kRuntime, e.what());
    }
  } catch (const clean::InsufficientGpuMemory& e) {
    return one_line(ExitCode::kRuntime, e.what());
  } catch (const clean::InsufficientHostMemory& e) {
    return one_line(ExitCode::kRuntime, e.what());
  } catch (const clean::GpuUnavailable& e) {
    return one_line(ExitCode::kRuntime, e.what());
  } catch (const clean::SelectMismatch& e) {
    return one_line(ExitCode::kInternal, e.what());
#ifdef GPUCLEAN_HAVE_CUDA
  } catch (const cuda::CudaError& e) {
    if (e.out_of_memory())
      return one_line(ExitCode::kRuntime, "the GPU ran out of memory (" + std::string(e.what()) +
                                              "); use --device cpu, a smaller image, or a GPU with more memory.");
    return one_line(ExitCode::kRuntime, std::string("GPU error: ") + e.what());
#endif
  } catch (const RuntimeFailure& e) {
    return one_line(ExitCode::kRuntime, e.what());
  } catch (const CLI::ParseError& e) {
    return one_line(ExitCode::kUsage, e.what());
  } catch (const std::bad_alloc&) {
    return one_line(ExitCode::kRuntime, "out of host memory; use a smaller image or a machine with more memory.");
  } catch (const std::invalid_argument& e) {
    return one_line(ExitCode::kUsage, e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    return one_line(ExitCode::kRuntime, e.what());
  } catch (const std::exception& e) {
    return one_line(ExitCode::kInternal, std::string("internal error: ") + e.what() + " (please report this)");
  } catch (...) {
  }
  return one_line(ExitCode::kInternal, "internal error: unknown exception (please report this)");
}

}  // namespace gpuclean::app
