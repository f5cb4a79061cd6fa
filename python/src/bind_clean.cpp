// gpuclean.deconvolve's core: the command line's parser and run, on files or on arrays.

#include <cmath>
#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "app/embedded_run.hpp"
#include "app/option_table.hpp"
#include "python/src/bindings.hpp"

namespace gpuclean::python {
namespace {

io::FitsImage to_fits_image(const FloatArray& a, const std::vector<std::string>& cards, std::vector<long> axes) {
  if (a.ndim() != 2) throw py::value_error("images must be 2-D arrays (height, width)");
  io::FitsImage image;
  image.height = static_cast<std::size_t>(a.shape(0));
  image.width = static_cast<std::size_t>(a.shape(1));
  image.pixels.assign(a.data(), a.data() + a.size());
  for (float v : image.pixels) image.nan_count += std::isnan(v) ? 1 : 0;
  for (const std::string& card : cards) image.header.add_card(card);
  image.axes = plane_axes(std::move(axes), image.width, image.height);
  return image;
}

py::array_t<float> to_array(clean::HostImage&& image) {
  const auto h = static_cast<py::ssize_t>(image.height), w = static_cast<py::ssize_t>(image.width);
  return adopt(std::move(image.pixels), {h, w});
}

py::dict to_dict(app::EmbeddedRun&& run) {
  clean::CleanResult& r = run.result;
  const std::size_t n = r.components.list.size();
  std::vector<std::uint32_t> x(n), y(n);
  std::vector<float> flux(n);
  std::vector<double> scale_size(n);
  for (std::size_t i = 0; i < n; ++i) {
    const clean::Component& c = r.components.list[i];
    x[i] = c.x, y[i] = c.y, flux[i] = c.flux, scale_size[i] = r.components.scales.empty() ? 0.0 : r.components.scales[c.scale].size;
  }
  py::dict d;
  d["model"] = to_array(std::move(r.images.model));
  d["residual"] = to_array(std::move(r.images.residual));
  d["restored"] = to_array(std::move(r.images.restored));
  if (r.images.noise_map.size()) d["noise_map"] = to_array(std::move(r.images.noise_map));
  const auto len = static_cast<py::ssize_t>(n);
  d["component_x"] = adopt(std::move(x), {len});
  d["component_y"] = adopt(std::move(y), {len});
  d["component_flux"] = adopt(std::move(flux), {len});
  d["component_scale"] = adopt(std::move(scale_size), {len});
  d["summary_json"] = run.summary_json;
  return d;
}

/// `args` as on the command line. With `dirty` None, the files named in `args` are read;
/// otherwise the arrays (and the dirty image's header cards and stored axes) are cleaned.
py::dict run(const std::vector<std::string>& args, const std::optional<FloatArray>& dirty,
             const std::optional<FloatArray>& psf, const std::vector<std::string>& cards, const std::vector<long>& axes,
             const std::optional<py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>>& mask) {
  app::RunOptions options = app::parse_run_options(args);
  if (!dirty) {
    app::EmbeddedRun result;
    {
      py::gil_scoped_release release;
      result = app::run_embedded(options);
    }
    return to_dict(std::move(result));
  }
  if (!psf) throw py::value_error("give the PSF as an array too");
  // Messages and the summary name the inputs; arrays have no file name.
  options.dirty = "dirty (array)";
  options.psf = "psf (array)";
  io::FitsImage dirty_image = to_fits_image(*dirty, cards, axes);
  io::FitsImage psf_image = to_fits_image(*psf, {}, {});
  std::optional<clean::HostImage> mask_image;
  if (mask) {
    if (mask->ndim() != 2) throw py::value_error("the mask must be a 2-D array (height, width)");
    mask_image.emplace(static_cast<std::size_t>(mask->shape(1)), static_cast<std::size_t>(mask->shape(0)));
    for (py::ssize_t i = 0; i < mask->size(); ++i) mask_image->pixels[i] = mask->data()[i] != 0 ? 1.0f : 0.0f;
  }
  app::EmbeddedRun result;
  {
    py::gil_scoped_release release;
    result = app::run_embedded(options, std::move(dirty_image), std::move(psf_image), std::move(mask_image));
  }
  return to_dict(std::move(result));
}

std::optional<clean::HostImage> host_mask(
    const std::optional<py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>>& mask) {
  if (!mask) return std::nullopt;
  if (mask->ndim() != 2) throw py::value_error("the mask must be a 2-D array (height, width)");
  clean::HostImage m(static_cast<std::size_t>(mask->shape(1)), static_cast<std::size_t>(mask->shape(0)));
  for (py::ssize_t i = 0; i < mask->size(); ++i) m.pixels[i] = mask->data()[i] != 0 ? 1.0f : 0.0f;
  return m;
}

/// As run(), with the dirty image a CUDA array given by its device pointer (float32, C order,
/// height x width) and the stream it is ready on: it is not copied to the host (see
/// app::run_embedded). The Python side checks the array's type and layout.
py::dict run_device(const std::vector<std::string>& args, std::uintptr_t dirty_pointer, std::size_t height,
                    std::size_t width, std::uintptr_t stream, const FloatArray& psf,
                    const std::vector<std::string>& cards, const std::vector<long>& axes,
                    const std::optional<py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>>& mask) {
  app::RunOptions options = app::parse_run_options(args);
  options.dirty = "dirty (CUDA array)";
  options.psf = "psf (array)";
  clean::DeviceImage dirty{reinterpret_cast<const float*>(dirty_pointer), width, height, stream};
  io::FitsImage header;
  for (const std::string& card : cards) header.header.add_card(card);
  header.axes = plane_axes(axes, width, height);
  io::FitsImage psf_image = to_fits_image(psf, {}, {});
  std::optional<clean::HostImage> mask_image = host_mask(mask);
  app::EmbeddedRun result;
  {
    py::gil_scoped_release release;
    result = app::run_embedded(options, dirty, std::move(header), std::move(psf_image), std::move(mask_image));
  }
  return to_dict(std::move(result));
}

}  // namespace

void bind_clean(py::module_& m) {
  m.def("run", &run, py::arg("args"), py::arg("dirty"), py::arg("psf"), py::arg("cards"), py::arg("axes"),
        py::arg("mask"));
  m.def("run_device", &run_device, py::arg("args"), py::arg("dirty_pointer"), py::arg("height"), py::arg("width"),
        py::arg("stream"), py::arg("psf"), py::arg("cards"), py::arg("axes"), py::arg("mask"));
  // (name, default, description, values, group, range, wsclean, wsclean_reach) per option.
  m.def("option_table", [] {
    py::list rows;
    for (const app::OptionInfo& o : app::run_option_table())
      rows.append(py::make_tuple(o.name, o.default_value, o.description, o.values, o.group, o.range, o.wsclean,
                                 o.wsclean_reach));
    return rows;
  });
}

}  // namespace gpuclean::python
