#include "io/fits_reader.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <system_error>

#include "io/fits_file.hpp"
#include "io/fits_open.hpp"
#include "io/fits_raw_detail.hpp"

namespace gpuclean::io {
namespace detail {
namespace {
constexpr auto kInput = FitsError::Kind::kInput;

// Moves to the HDU that holds the image: the primary, or the first image extension with data.
void move_to_image_hdu(fitsfile* f, const std::string& path) {
  int status = 0;
  int naxis = 0;
  fits_get_img_dim(f, &naxis, &status);
  if (status == 0 && naxis > 0) return;
  int n_hdus = 0;
  status = 0;
  fits_get_num_hdus(f, &n_hdus, &status);
  for (int hdu = 2; hdu <= n_hdus; ++hdu) {
    int type = 0;
    status = 0;
    fits_movabs_hdu(f, hdu, &type, &status);
    if (status != 0) break;
    if (type != IMAGE_HDU) continue;
    naxis = 0;
    fits_get_img_dim(f, &naxis, &status);
    if (status == 0 && naxis > 0) return;
  }
  throw FitsError(kInput, "'" + path +
                              "' holds no image: its primary HDU is empty and no image extension "
                              "follows. Give a FITS image (e.g. a WSClean -dirty.fits).");
}

}  // namespace

FitsHeader read_header(fitsfile* f, const std::string& path) {
  int status = 0;
  int n_keys = 0;
  fits_get_hdrspace(f, &n_keys, nullptr, &status);
  check_fits(status, kInput, "cannot read the header of", path);
  FitsHeader header;
  char card[FLEN_CARD];
  for (int i = 1; i <= n_keys; ++i) {
    fits_read_record(f, i, card, &status);
    check_fits(status, kInput, "cannot read the header of", path);
    const std::string text(card);
    if (!FitsHeader::is_structural(FitsHeader::keyword_of(text))) header.add_card(text);
  }
  return header;
}

namespace {
// A header that claims more pixels than the file holds (cut short in a copy, or a corrupt NAXISn)
// would otherwise end in an attempt to allocate them: compare first, before any allocation.
// Tile-compressed images store fewer bytes than they unpack to and are left to CFITSIO.
void check_data_fits_in_file(fitsfile* f, const std::string& path, const FitsImage& image) {
  int status = 0;
  if (fits_is_compressed_image(f, &status)) return;
  LONGLONG head = 0, data = 0, end = 0;
  fits_get_hduaddrll(f, &head, &data, &end, &status);
  check_fits(status, kInput, "cannot locate the data of", path);
  std::error_code ec;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) return;  // not a regular file (a pipe): CFITSIO reports a short read itself
  const auto have = file_bytes > static_cast<std::uintmax_t>(data) ? file_bytes - static_cast<std::uintmax_t>(data) : 0;
  std::uintmax_t need = static_cast<std::uintmax_t>(std::abs(image.bitpix) / 8);
  bool overflow = false;
  for (long a : image.axes) overflow = overflow || __builtin_mul_overflow(need, static_cast<std::uintmax_t>(a), &need);
  if (!overflow && need <= have) return;
  std::string shape;
  for (long a : image.axes) {
    if (!shape.empty()) shape += 'x';
    shape += std::to_string(a);
  }
  throw FitsError(kInput, "'" + path + "' is truncated or its header is wrong: the header announces a " + shape +
                              " image (BITPIX " + std::to_string(image.bitpix) + ", " +
                              (overflow ? std::string("more bytes than any file holds")
                                        : std::to_string(need) + " bytes of data") +
                              ") but the file holds " + std::to_string(have) +
                              " bytes after its header. Copy the file again, or fix NAXISn/BITPIX.");
}

}  // namespace

FitsFilePtr open_image(const std::string& path, FitsImage& image) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw FitsError(kInput, "'" + path + "' does not exist. Check the path and the file name.");
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw FitsError(kInput, "'" + path + "' is a folder, not a FITS file.");
  }

  init_cfitsio_once();
  fitsfile* raw = nullptr;
  int status = 0;
  // The disk-file variant turns off CFITSIO's extended file-name syntax, so that names with
  // brackets or parentheses are taken literally.
  fits_open_diskfile(&raw, path.c_str(), READONLY, &status);
  if (status != 0) {
    if (raw) {
      int ignore = 0;
      fits_close_file(raw, &ignore);
    }
    throw FitsError(kInput, "'" + path + "' is not a readable FITS file (" +
                                detail::fits_status_text(status) +
                                "). Give a FITS image such as WSClean's -dirty.fits.");
  }
  FitsFilePtr file(raw);
  move_to_image_hdu(file.get(), path);

  int naxis = 0;
  long naxes[16] = {0};
  fits_get_img_param(file.get(), 16, &image.bitpix, &naxis, naxes, &status);
  check_fits(status, kInput, "cannot read the image size of", path);
  if (naxis < 2 || naxis > 4) {
    throw FitsError(kInput, "'" + path + "' has " + std::to_string(naxis) +
                                " axes; gpuclean reads 2-D images and 3-D/4-D cubes whose third and "
                                "fourth axes are FREQ and STOKES.");
  }
  image.axes.assign(naxes, naxes + naxis);
  if (naxes[0] < 1 || naxes[1] < 1) {
    throw FitsError(kInput, "'" + path + "' has an empty image axis.");
  }
  image.width = static_cast<std::size_t>(naxes[0]);
  image.height = static_cast<std::size_t>(naxes[1]);
  check_data_fits_in_file(file.get(), path, image);
  return file;
}

std::size_t read_pixels(fitsfile* f, const std::string& path, std::size_t naxis, float* out, std::size_t n) {
  if (const auto nulls = read_raw_pixels(f, path, out, n)) return *nulls;
  int status = 0;
  std::vector<char> null_flags(n, 0);
  int any_null = 0;
  // CFITSIO applies BSCALE/BZERO and flags BLANK (integer) and NaN (float) pixels.
  fits_read_pixnull(f, TFLOAT, std::vector<long>(naxis, 1L).data(), static_cast<LONGLONG>(n), out,
                    null_flags.data(), &any_null, &status);
  check_fits(status, kInput, "cannot read the pixels of", path);
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::size_t nan_count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (null_flags[i] || std::isnan(out[i])) {
      out[i] = kNaN;
      ++nan_count;
    }
  }
  return nan_count;
}

}  // namespace detail

// One plane of the one reader (detail::read_cube): a 2-D image is a one-plane cube.
FitsImage read_fits_shape(const std::string& path) {
  return detail::one_plane_image(detail::read_cube(path, {.header = false, .pixels = false, .one_plane = true}));
}

FitsImage read_fits_header(const std::string& path) {
  return detail::one_plane_image(detail::read_cube(path, {.pixels = false, .one_plane = true}));
}

FitsImage read_fits_image(const std::string& path) {
  return detail::one_plane_image(detail::read_cube(path, {.one_plane = true}));
}

}  // namespace gpuclean::io

namespace gpuclean::io {

bool fits_file_complete(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return false;
  fitsfile* raw = nullptr;
  int status = 0;
  fits_open_diskfile(&raw, path.c_str(), READONLY, &status);
  if (status != 0) return false;
  detail::FitsFilePtr f(raw);
  int n_hdus = 0;
  fits_get_num_hdus(raw, &n_hdus, &status);
  int type = 0;
  if (status == 0 && n_hdus > 1) fits_movabs_hdu(raw, n_hdus, &type, &status);
  LONGLONG head = 0, data = 0, end = 0;
  if (status == 0) fits_get_hduaddrll(raw, &head, &data, &end, &status);
  return status == 0 && end > 0 && static_cast<std::uintmax_t>(end) <= size;
}

}  // namespace gpuclean::io
