// The raw float writer (io/fits_raw_detail.hpp): CFITSIO formats the header in memory, the pixels
// are swapped into a reused buffer and pwritten, and the checksums are summed on the way.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "io/fits_raw_detail.hpp"

namespace gpuclean::io::detail {
namespace {

constexpr auto kOutput = FitsError::Kind::kOutput;
constexpr std::size_t kBlock = 2880, kCard = 80;
constexpr std::size_t kChunkFloats = std::size_t{1} << 20;  // 4 MiB: one 1024² plane in one pwrite

using u32 = std::uint32_t __attribute__((may_alias));

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw FitsError(kOutput, what + " '" + path + "': " + std::strerror(errno) +
                               ". Check the free space and that the folder is writable.");
}

void pwrite_all(int fd, const void* src, std::size_t bytes, off_t at, const std::string& path) {
  const auto* p = static_cast<const char*>(src);
  while (bytes > 0) {
    const ssize_t w = ::pwrite(fd, p, bytes, at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      fail("cannot write the pixels of", path);
    }
    p += w, at += w, bytes -= static_cast<std::size_t>(w);
  }
}

// Header text as CFITSIO writes it (cards, END, blank padding to the block), made in a memory
// file whose image has axes of length 1 so that closing it pads 4 bytes, not the whole data unit;
// the true NAXISn values are then set in the text (integers right-justified in columns 11-30).
std::string make_header(const std::vector<long>& shape, const CardWriter& cards, const std::string& datasum,
                        const std::string& path) {
  void* mem = nullptr;
  std::size_t mem_size = 0;
  struct FreeMem {  // CFITSIO reallocs `mem` through its address; freed on every way out, after the file
    void** p;
    ~FreeMem() { std::free(*p); }
  } free_mem{&mem};
  fitsfile* f = nullptr;
  int status = 0;
  fits_create_memfile(&f, &mem, &mem_size, 0, std::realloc, &status);
  check_fits(status, kOutput, "cannot make the header of", path);
  std::string text;
  {
    FitsFilePtr file(f);
    std::vector<long> ones(shape.size(), 1L);
    fits_create_img(f, FLOAT_IMG, static_cast<int>(shape.size()), ones.data(), &status);
    cards(f, &status);
    fits_update_key_str(f, "CHECKSUM", "0000000000000000", "HDU checksum", &status);
    fits_update_key_str(f, "DATASUM", datasum.c_str(), "data unit checksum", &status);
    char* all = nullptr;
    int keys = 0;
    fits_hdr2str(f, 0, nullptr, 0, &all, &keys, &status);
    if (all) {
      text = all;
      int ignore = 0;
      fits_free_memory(all, &ignore);
    }
    check_fits(status, kOutput, "cannot write the header of", path);
  }
  for (std::size_t a = 0; a < shape.size(); ++a) {
    const std::string key = "NAXIS" + std::to_string(a + 1);
    for (std::size_t at = 0; at + kCard <= text.size(); at += kCard) {
      if (text.compare(at, key.size(), key) != 0 || text[at + key.size()] != ' ') continue;
      char value[21];
      std::snprintf(value, sizeof value, "%20ld", shape[a]);
      text.replace(at + 10, 20, value);
      break;
    }
  }
  text.append((kBlock - text.size() % kBlock) % kBlock, ' ');
  return text;
}

// Sets the CHECKSUM card's 16 characters (it holds '0000000000000000' while summed).
void set_checksum(std::string& header, std::uint32_t datasum) {
  std::size_t at = 0;
  while (header.compare(at, 28, "CHECKSUM= '0000000000000000'") != 0) at += kCard;  // make_header wrote it
  std::vector<std::uint32_t> words(header.size() / 4);
  std::memcpy(words.data(), header.data(), header.size());
  for (auto& w : words) w = __builtin_bswap32(w);  // big-endian words
  const std::uint64_t sum = ones_sum(words.data(), words.size(), datasum);
  char ascii[17] = {0};
  fits_encode_chksum(ones_fold(sum), 1, ascii);
  header.replace(at + 11, 16, ascii, 16);
}

// Big-endian words of `m` floats into dst, and their checksum sum: a float's bits are its
// big-endian word, so the sum needs no swap.
GPUCLEAN_SIMD_CLONES std::uint64_t swap_and_sum(const u32* src, u32* dst,
                                                                             std::size_t m) {
  std::uint64_t s = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::uint32_t v = src[k];
    s += v;
    dst[k] = __builtin_bswap32(v);
  }
  return s;
}

}  // namespace

void write_raw_fits(const std::string& tmp, const std::string& path, const float* pixels,
                    const std::vector<long>& shape, const CardWriter& cards, const ExtensionWriter& extensions,
                    bool sync) {
  std::size_t n = 1;
  for (long a : shape) n *= static_cast<std::size_t>(a);
  // The header's length does not depend on DATASUM's value, so the pixels go first, after the
  // header's blocks, and the header, summed with them, last.
  const std::size_t header_bytes = make_header(shape, cards, "0", path).size();

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail("cannot create", tmp);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  thread_local std::unique_ptr<std::uint32_t[]> buffer(new std::uint32_t[kChunkFloats]);
  const auto* src = reinterpret_cast<const u32*>(pixels);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; i += kChunkFloats) {
    const std::size_t m = std::min(kChunkFloats, n - i);
    sum += swap_and_sum(src + i, buffer.get(), m);
    pwrite_all(fd, buffer.get(), m * 4, static_cast<off_t>(header_bytes + i * 4), path);
  }
  const std::size_t data_bytes = n * 4, fill = (kBlock - data_bytes % kBlock) % kBlock;
  if (fill > 0) {
    static const char zeros[kBlock] = {};
    pwrite_all(fd, zeros, fill, static_cast<off_t>(header_bytes + data_bytes), path);
  }
  const std::uint32_t datasum = ones_fold(sum);
  std::string header = make_header(shape, cards, std::to_string(datasum), path);
  if (header.size() != header_bytes) throw FitsError(kOutput, "internal: the header of '" + path + "' changed size");
  set_checksum(header, datasum);
  pwrite_all(fd, header.data(), header.size(), 0, path);

  if (extensions) {
    fitsfile* raw = nullptr;
    int status = 0;
    fits_open_diskfile(&raw, tmp.c_str(), READWRITE, &status);
    check_fits(status, kOutput, "cannot reopen", tmp);
    FitsFilePtr file(raw);
    extensions(raw, path);
    file.release();
    fits_close_file(raw, &status);
    check_fits(status, kOutput, "cannot finish writing", path);
  }
  if (sync) {
    if (::fdatasync(fd) != 0) fail("cannot write", path);
  } else {
    // Starts the writeback now, so that the commit's sync mostly finds it done.
    ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
}

}  // namespace gpuclean::io::detail
