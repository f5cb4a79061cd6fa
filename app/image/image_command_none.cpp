// `gpuclean image` in a build without casacore (GPUCLEAN_ENABLE_MS off or casacore not found).
#include "app/image/image_command.hpp"

#include "clean/errors.hpp"

namespace gpuclean::app {

int run_image(const std::vector<std::string>&, const std::string&) {
  throw clean::InvalidSettings(
      "gpuclean image: this gpuclean was built without casacore, so it cannot read MeasurementSets "
      "(rebuild with casacore-dev installed, -DGPUCLEAN_ENABLE_MS=ON)");
}

}  // namespace gpuclean::app
