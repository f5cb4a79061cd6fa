#include "io/fits_writer.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "io/fits_cube.hpp"
#include "io/fits_file.hpp"
#include "io/fits_raw.hpp"
#include "io/fits_raw_detail.hpp"
#include "io/fits_write_file.hpp"
#include "io/publish.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;
namespace {

using detail::check_fits;
using detail::CardWriter;
using detail::ExtensionWriter;
constexpr auto kOutput = FitsError::Kind::kOutput;

// Removes the temporary file unless the write completed and it was renamed.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  void release() { path_.clear(); }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  std::string path_;
};

std::string reserve_temp_name(const fs::path& target) {
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::string hidden = ".";
  hidden += target.filename().string();
  hidden += ".tmp-XXXXXX";
  std::string templ = (dir / hidden).string();
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) {
    throw FitsError(kOutput, "cannot create a file in '" + dir.string() + "': " +
                                 std::strerror(errno) + ". Check that the folder exists and is writable.");
  }
  ::close(fd);
  ::unlink(templ.c_str());  // CFITSIO creates the file itself; the name stays ours
  return templ;
}

void write_keyword(fitsfile* f, const Keyword& kw, int* status) {
  char* comment = const_cast<char*>(kw.comment.c_str());
  char* name = const_cast<char*>(kw.name.c_str());
  if (const auto* s = std::get_if<std::string>(&kw.value)) {
    fits_update_key_str(f, name, s->c_str(), comment, status);
  } else if (const auto* d = std::get_if<double>(&kw.value)) {
    fits_update_key_dbl(f, name, *d, -12, comment, status);
  } else if (const auto* i = std::get_if<long long>(&kw.value)) {
    fits_update_key_lng(f, name, *i, comment, status);
  } else if (const auto* b = std::get_if<bool>(&kw.value)) {
    fits_update_key_log(f, name, *b ? 1 : 0, comment, status);
  }
}

// The header cards after fits_create_img: the input's, then those this writer owns.
void write_cards(fitsfile* f, const FitsHeader& header, const WriteOptions& options, int* status) {
  for (const auto& card : header.cards()) {
    const std::string kw = FitsHeader::keyword_of(card);
    if (kw == "BUNIT" || kw == "BMAJ" || kw == "BMIN" || kw == "BPA" || kw == "CASAMBM" || kw == "ORIGIN" ||
        kw == "DATE" || kw.rfind("GC", 0) == 0) {
      continue;
    }
    // CFITSIO writes its own copy of the standard's reference comment.
    if (kw == "COMMENT" && (card.find("FITS (Flexible Image Transport System)") != std::string::npos ||
                            card.find("and Astrophysics', volume 376") != std::string::npos)) {
      continue;
    }
    fits_write_record(f, card.c_str(), status);
  }
  fits_update_key_str(f, const_cast<char*>("BUNIT"), options.bunit.c_str(), const_cast<char*>("Units of flux"), status);
  if (options.beam) {
    fits_update_key_dbl(f, const_cast<char*>("BMAJ"), options.beam->bmaj_deg, -12,
                        const_cast<char*>("[deg] restoring beam major axis (FWHM)"), status);
    fits_update_key_dbl(f, const_cast<char*>("BMIN"), options.beam->bmin_deg, -12,
                        const_cast<char*>("[deg] restoring beam minor axis (FWHM)"), status);
    fits_update_key_dbl(f, const_cast<char*>("BPA"), options.beam->bpa_deg, -12,
                        const_cast<char*>("[deg] restoring beam position angle"), status);
  }
  for (const auto& kw : options.keywords) write_keyword(f, kw, status);
  for (const auto& line : options.history) fits_write_history(f, line.c_str(), status);
  fits_write_date(f, status);
}

// The path before issue 37 (set_fits_raw_io(false)): CFITSIO writes the pixels and reads them
// back for the checksum, and every file is fsynced on its own.
void write_cfitsio(const std::string& tmp, const std::string& path, const float* pixels, const std::vector<long>& shape,
                   const CardWriter& cards, const ExtensionWriter& extensions) {
  {
    fitsfile* raw = nullptr;
    int status = 0;
    fits_create_diskfile(&raw, tmp.c_str(), &status);
    check_fits(status, kOutput, "cannot create", tmp);
    detail::FitsFilePtr file(raw);
    fits_create_img(file.get(), FLOAT_IMG, static_cast<int>(shape.size()), const_cast<long*>(shape.data()), &status);
    check_fits(status, kOutput, "cannot create the image in", tmp);
    cards(file.get(), &status);
    check_fits(status, kOutput, "cannot write the header of", tmp);
    LONGLONG n = 1;
    for (long a : shape) n *= a;
    fits_write_img(file.get(), TFLOAT, 1, n, const_cast<float*>(pixels), &status);
    check_fits(status, kOutput, "cannot write the pixels of", path);
    fits_write_chksum(file.get(), &status);
    check_fits(status, kOutput, "cannot write the checksum of", path);
    if (extensions) extensions(file.get(), path);
    raw = file.release();
    fits_close_file(raw, &status);
    check_fits(status, kOutput, "cannot finish writing", path);
  }
  sync_file(tmp);  // durable before it is renamed into place (io/publish.hpp)
}

}  // namespace

void check_output_path(const std::string& path, const WriteOptions& options) {
  std::error_code ec;
  for (const auto& input : options.inputs) {
    if (fs::exists(input, ec) && fs::exists(path, ec) && fs::equivalent(input, path, ec)) {
      throw FitsError(FitsError::Kind::kExists,
                      "output '" + path + "' is the input '" + input +
                          "'; gpuclean never writes over an input. Choose another output name.");
    }
    if (fs::weakly_canonical(input, ec) == fs::weakly_canonical(path, ec)) {
      throw FitsError(FitsError::Kind::kExists,
                      "output '" + path + "' names the input '" + input +
                          "'; gpuclean never writes over an input. Choose another output name.");
    }
  }
  if (fs::is_directory(path, ec)) {
    throw FitsError(FitsError::Kind::kExists, "output '" + path + "' is a folder; give a file name.");
  }
  if (!options.overwrite && fs::exists(path, ec)) {
    throw FitsError(FitsError::Kind::kExists,
                    "output '" + path + "' already exists. Give --overwrite to replace it, or choose another name.");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw FitsError(kOutput, "the folder of output '" + path + "' does not exist. Create it first.");
  }
}

void write_fits_image(const std::string& path, const float* pixels, std::size_t width,
                      std::size_t height, const FitsHeader& header, const std::vector<long>& axes,
                      const WriteOptions& options) {
  // A one-plane cube, written by the cube writer with its axes as given.
  FitsCube layout;
  layout.width = width;
  layout.height = height;
  layout.axes = axes;
  if (layout.axes.size() < 2) layout.axes = {static_cast<long>(width), static_cast<long>(height)};
  if (static_cast<std::size_t>(layout.axes[0]) != width || static_cast<std::size_t>(layout.axes[1]) != height) {
    throw FitsError(kOutput, "internal: output axes do not match the image size for '" + path + "'");
  }
  write_fits_cube(path, layout, pixels, header, {}, options);
}

namespace detail {

void write_fits_file(const std::string& path, const float* pixels, const std::vector<long>& shape,
                     const FitsHeader& header, const WriteOptions& options, const ExtensionWriter& extensions) {
  init_cfitsio_once();
  check_output_path(path, options);
  const std::string tmp = reserve_temp_name(fs::path(path));
  TempFileGuard guard(tmp);
  const CardWriter cards = [&](fitsfile* f, int* status) { write_cards(f, header, options, status); };
  if (fits_raw_io()) {
    // A staged output is made durable by StagedOutputs::commit, all at once, before any rename.
    write_raw_fits(tmp, path, pixels, shape, cards, extensions, !durable_at_commit(path));
  } else {
    write_cfitsio(tmp, path, pixels, shape, cards, extensions);
  }
  publish_file(tmp, path, options.overwrite);
  guard.release();
}

}  // namespace detail
}  // namespace gpuclean::io
