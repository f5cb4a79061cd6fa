#include "io/fits_raw.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "io/fits_open.hpp"
#include "io/fits_raw_detail.hpp"

namespace gpuclean::io {
namespace {

std::atomic<bool> g_raw_io{true};
constexpr auto kInput = FitsError::Kind::kInput;
// Chunks small enough to stay in cache between the pread and the swap, large enough that the
// syscalls cost nothing.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

using u32 = std::uint32_t __attribute__((may_alias));
using u64 = std::uint64_t __attribute__((may_alias));

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void pread_all(int fd, void* dst, std::size_t bytes, off_t at, const std::string& path) {
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t r = ::pread(fd, p, bytes, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      throw FitsError(kInput, "cannot read the pixels of '" + path + "': " +
                                  (r < 0 ? std::string(std::strerror(errno)) : std::string("the file ended early")) +
                                  ". Copy the file again.");
    }
    p += r, at += r, bytes -= static_cast<std::size_t>(r);
  }
}

// The swaps are branchless so that they vectorise (GPUCLEAN_SIMD_CLONES).

// BITPIX -32, in place: CFITSIO's conversion with null checking (fffr4r4): exponent all ones
// (NaN, ±Inf) is null, exponent zero (±0, denormals) reads as +0.
GPUCLEAN_SIMD_CLONES std::size_t swap_floats(u32* w, std::size_t n) {
  constexpr std::uint32_t kExp = 0x7f800000u, kNaN = 0x7fc00000u;  // numeric_limits<float>::quiet_NaN()
  std::size_t nulls = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = __builtin_bswap32(w[i]);
    const std::uint32_t e = v & kExp;
    const std::uint32_t null = e == kExp, keep = e != kExp && e != 0;
    nulls += null;
    w[i] = (v & (0u - keep)) | (kNaN & (0u - null));
  }
  return nulls;
}

// BITPIX -64 into floats (fffr8r4): the same nulls and zeros; the rest is cast. A finite value
// beyond float's range is counted in `over`: CFITSIO versions differ there (Debian 12's 4.2.0
// returns ±Inf, trixie's refuses with an overflow), so such a file is read by CFITSIO itself.
GPUCLEAN_SIMD_CLONES std::size_t swap_doubles(const u64* in, u32* out, std::size_t n, std::size_t& over) {
  constexpr std::uint64_t kExp = 0x7ff0000000000000ull;
  constexpr std::uint32_t kNaN = 0x7fc00000u;
  std::size_t nulls = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t v = __builtin_bswap64(in[i]);
    const std::uint64_t e = v & kExp;
    double d;
    std::memcpy(&d, &v, sizeof d);
    const float f = static_cast<float>(d);
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    const std::uint32_t null = e == kExp, keep = e != kExp && e != 0;
    nulls += null;
    over += keep & (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()));
    out[i] = (b & (0u - keep)) | (kNaN & (0u - null));
  }
  return nulls;
}

}  // namespace

void set_fits_raw_io(bool on) { g_raw_io.store(on, std::memory_order_relaxed); }
bool fits_raw_io() { return g_raw_io.load(std::memory_order_relaxed); }

FitsImage read_fits_image_into(const std::string& path, const PixelBuffer& provide) {
  detail::CubeParts parts{.one_plane = true};
  parts.into = &provide;
  return detail::one_plane_image(detail::read_cube(path, parts));
}

namespace detail {

void init_cfitsio_once() {
  static const int done = fits_init_cfitsio();
  (void)done;
}

std::optional<std::size_t> read_raw_pixels(fitsfile* f, const std::string& path, float* out, std::size_t n) {
  if (!fits_raw_io()) return std::nullopt;
  int status = 0, bitpix = 0;
  fits_get_img_type(f, &bitpix, &status);
  if (status != 0 || (bitpix != -32 && bitpix != -64)) return std::nullopt;
  if (fits_is_compressed_image(f, &status) || status != 0) return std::nullopt;
  for (const char* key : {"BSCALE", "BZERO"}) {
    double v = 0.0;
    fits_read_key_dbl(f, key, &v, nullptr, &status);
    if (status == KEY_NO_EXIST) {
      status = 0;
      fits_clear_errmsg();
      continue;
    }
    if (status != 0 || v != (key[1] == 'S' ? 1.0 : 0.0)) {
      fits_clear_errmsg();
      return std::nullopt;
    }
  }
  LONGLONG head = 0, data = 0, end = 0;
  fits_get_hduaddrll(f, &head, &data, &end, &status);
  if (status != 0) return std::nullopt;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st{};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;

  const std::size_t size = bitpix == -32 ? 4 : 8;
  ::posix_fadvise(fd.get(), data, static_cast<off_t>(n * size), POSIX_FADV_SEQUENTIAL);
  std::size_t nulls = 0;
  auto* dst = reinterpret_cast<u32*>(out);
  const std::size_t per_chunk = kChunkBytes / size;
  if (bitpix == -32) {
    for (std::size_t i = 0; i < n; i += per_chunk) {
      const std::size_t m = std::min(per_chunk, n - i);
      pread_all(fd.get(), dst + i, m * 4, static_cast<off_t>(data + static_cast<LONGLONG>(i * 4)), path);
      nulls += swap_floats(dst + i, m);
    }
    return nulls;
  }
  thread_local std::unique_ptr<std::uint64_t[]> buffer(new std::uint64_t[kChunkBytes / 8]);
  std::size_t over = 0;
  for (std::size_t i = 0; i < n; i += per_chunk) {
    const std::size_t m = std::min(per_chunk, n - i);
    pread_all(fd.get(), buffer.get(), m * 8, static_cast<off_t>(data + static_cast<LONGLONG>(i * 8)), path);
    nulls += swap_doubles(buffer.get(), dst + i, m, over);
    if (over) return std::nullopt;  // CFITSIO reads it again, as its version does (above)
  }
  return nulls;
}

std::uint64_t ones_sum(const std::uint32_t* words, std::size_t n, std::uint64_t sum) {
  for (std::size_t i = 0; i < n; ++i) sum += words[i];
  return sum;
}

std::uint32_t ones_fold(std::uint64_t sum) {
  while (sum >> 32) sum = (sum & 0xffffffffull) + (sum >> 32);
  return static_cast<std::uint32_t>(sum);
}

}  // namespace detail
}  // namespace gpuclean::io
