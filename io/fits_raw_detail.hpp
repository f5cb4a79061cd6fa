#pragma once
// The raw pixel paths under the reader and the writer (io/fits_raw.hpp). Private to io/.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/fits_file.hpp"
#include "io/fits_write_file.hpp"

// The pixel loops are also built for AVX2 on x86-64 (vpshufb swaps), chosen at load time; the
// baseline build stays as it is, and other architectures get their own.
#if defined(__x86_64__) && defined(__GNUC__)
#define GPUCLEAN_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPUCLEAN_SIMD_CLONES
#endif

namespace gpuclean::io::detail {

/// CFITSIO initialises itself on first use without holding its lock throughout (helgrind: its
/// driver table read by one thread while another fills it); the first read or write of any
/// thread calls this, which initialises it once, before any concurrent use.
void init_cfitsio_once();

/// When the current HDU is an uncompressed BITPIX -32/-64 image without scaling, reads its first
/// `n` pixels into `out` with pread, exactly as CFITSIO's fits_read_pixnull(TFLOAT) would convert
/// them (NaN and ±Inf become NaN, zero exponents +0), and returns the NaN count. nullopt: not
/// such an image (or not a regular file), nothing read; the caller goes through CFITSIO.
std::optional<std::size_t> read_raw_pixels(fitsfile* f, const std::string& path, float* out, std::size_t n);

/// 32-bit ones' complement sum of big-endian words, the FITS checksum (Seaman's algorithm), of
/// `words` already in host order (a float's bits read back as big-endian are its host bits).
std::uint64_t ones_sum(const std::uint32_t* words, std::size_t n, std::uint64_t sum = 0);
std::uint32_t ones_fold(std::uint64_t sum);

/// Writes the cards of the primary HDU (everything after fits_create_img).
using CardWriter = std::function<void(fitsfile*, int* status)>;

/// Writes a FLOAT_IMG primary HDU of `shape` into the new file `tmp` (created here, as CFITSIO
/// would: mode 0666 less umask): the header from CFITSIO (cards, END, padding), then the pixels
/// swapped in chunks and pwritten, the block padding, with DATASUM summed during the swap and
/// CHECKSUM set with fits_encode_chksum (no read-back). `extensions` are appended by CFITSIO.
/// With `sync` the file's bytes are durable on return; without, its writeback is only started
/// (StagedOutputs::commit makes it durable before any rename). Messages name `path`.
void write_raw_fits(const std::string& tmp, const std::string& path, const float* pixels,
                    const std::vector<long>& shape, const CardWriter& cards, const ExtensionWriter& extensions,
                    bool sync);

}  // namespace gpuclean::io::detail
