// gpuclean.fits: the command line's FITS reader and writer (io/), header cards kept verbatim.

#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "python/src/bindings.hpp"

namespace gpuclean::python {
namespace {

py::dict read(const std::string& path) {
  io::FitsImage image;
  {
    py::gil_scoped_release release;
    image = io::read_fits_image(path);
  }
  py::dict d;
  d["cards"] = image.header.cards();
  d["axes"] = image.axes;
  d["bitpix"] = image.bitpix;
  d["nan_count"] = image.nan_count;
  const auto h = static_cast<py::ssize_t>(image.height), w = static_cast<py::ssize_t>(image.width);
  d["data"] = adopt(std::move(image.pixels), {h, w});
  return d;
}

void write(const std::string& path, const FloatArray& data, const std::vector<std::string>& cards,
           const std::vector<long>& axes, const std::string& bunit, const std::optional<std::vector<double>>& beam_deg,
           const std::vector<std::string>& history, bool overwrite) {
  if (data.ndim() != 2) throw py::value_error("fits.write takes a 2-D array (height, width)");
  io::FitsHeader header;
  for (const std::string& card : cards) header.add_card(card);
  io::WriteOptions options;
  options.bunit = bunit;
  options.overwrite = overwrite;
  options.history = history;
  if (beam_deg) {
    if (beam_deg->size() != 3) throw py::value_error("beam is (BMAJ, BMIN, BPA) in degrees");
    options.beam = io::BeamKeywords{(*beam_deg)[0], (*beam_deg)[1], (*beam_deg)[2]};
  }
  const auto width = static_cast<std::size_t>(data.shape(1)), height = static_cast<std::size_t>(data.shape(0));
  py::gil_scoped_release release;
  io::write_fits_image(path, data.data(), width, height, header, plane_axes(axes, width, height), options);
}

}  // namespace

void bind_fits(py::module_& m) {
  m.def("fits_read", &read, py::arg("path"));
  m.def("fits_write", &write, py::arg("path"), py::arg("data"), py::arg("cards"), py::arg("axes"), py::arg("bunit"),
        py::arg("beam_deg"), py::arg("history"), py::arg("overwrite"));
  m.def("header_value", [](const std::vector<std::string>& cards, const std::string& keyword) {
    io::FitsHeader header;
    for (const std::string& card : cards) header.add_card(card);
    return header.get_string(keyword);
  });
}

}  // namespace gpuclean::python
