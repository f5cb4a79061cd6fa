#include "app/bench/bench_io.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "io/fits_raw.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"

namespace gpuclean::app {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// Runs job(i) for i < n on `threads` threads; returns the seconds taken.
double timed(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < std::min(threads, n); ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < n;) job(i);
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Drops a clean file's cached pages (no root needed; the bytes are synced first).
void drop_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct Row {
  std::string path;
  std::size_t threads = 0;
  double read = 0, write = 0, cache_read = 0, cache_write = 0;  // GB/s
  double commit_ms = 0;  // of the write: StagedOutputs::commit (the syncs and renames)
};

}  // namespace

void add_bench_io_options(CLI::App& sub, BenchIoOptions& o) {
  sub.add_option("--planes", o.planes, "planes (files) in the channel set")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub.add_option("--size", o.size, "plane size N (N x N floats)")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  sub.add_option("--threads", o.threads, "reader/writer thread counts (default: 1 and every core)")->delimiter(',')
      ->check(CLI::Range(1, 256));
  sub.add_option("--dir", o.dir, "scratch folder, kept (default: a temporary one, removed)");
  sub.add_flag("--cfitsio", o.cfitsio, "also the CFITSIO path as before issue 37 (CFITSIO pixels, checksum read-back, "
               "an fsync per file)");
  sub.add_flag("--cold", o.cold, "drop the files' cached pages before each read (posix_fadvise, no root needed)");
  sub.add_option("--repeats", o.repeats, "timed runs per row (median shown)")->check(CLI::Range(1, 100))
      ->capture_default_str();
}

int run_bench_io(const BenchIoOptions& o) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::size_t> threads = o.threads;
  if (threads.empty()) threads = {1, cores};
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());

  std::string dir = o.dir;
  if (dir.empty()) {
    std::string templ = (fs::temp_directory_path() / "gpuclean-bench-io-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      std::fprintf(stderr, "bench io: cannot make a folder in %s\n", fs::temp_directory_path().c_str());
      return 4;
    }
    dir = templ;
  }
  fs::create_directories(dir);

  // A dirty image's worth of values, some NaN.
  const std::size_t n = o.size * o.size;
  std::vector<float> pixels(n);
  for (std::size_t i = 0; i < n; ++i) pixels[i] = std::sin(0.001f * static_cast<float>(i)) * 0.01f;
  for (std::size_t i = 0; i < n; i += 9973) pixels[i] = NAN;
  io::FitsHeader header;
  header.set_string("CTYPE1", "RA---SIN");
  header.set_string("CTYPE2", "DEC--SIN");
  header.set_double("CDELT1", -1e-4);
  header.set_double("CDELT2", 1e-4);
  io::WriteOptions w;
  w.overwrite = true;
  const std::vector<long> axes = {static_cast<long>(o.size), static_cast<long>(o.size), 1, 1};
  const auto name = [&](std::size_t i, const char* ext) { return dir + "/plane-" + std::to_string(i) + ext; };
  const double bytes = static_cast<double>(o.planes) * static_cast<double>(n) * 4.0;
  const std::size_t file_bytes = (n * 4 + 2 * 2880 + 2879) / 2880 * 2880;

  int rc = 0;
  std::vector<Row> rows;
  std::vector<std::string> paths = {"raw"};
  if (o.cfitsio) paths.push_back("cfitsio");
  for (const std::string& path : paths) {
    io::set_fits_raw_io(path == "raw");
    for (std::size_t t : threads) {
      std::vector<double> rd, wr, crd, cwr, cm;
      for (std::size_t r = 0; r < o.repeats; ++r) {
        ::sync();  // nothing left from the last run's writes competes with this one's
        const auto t0 = Clock::now();
        {
          io::StagedOutputs staged(true);
          std::vector<std::string> stage(o.planes);
          for (std::size_t i = 0; i < o.planes; ++i) stage[i] = staged.stage(name(i, ".fits"));
          timed(o.planes, t, [&](std::size_t i) {
            io::write_fits_image(stage[i], pixels.data(), o.size, o.size, header, axes, w);
          });
          const auto t1 = Clock::now();
          staged.commit();
          cm.push_back(std::chrono::duration<double>(Clock::now() - t1).count() * 1e3);
        }
        wr.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (o.cold)
          for (std::size_t i = 0; i < o.planes; ++i) drop_cache(name(i, ".fits"));
        std::atomic<bool> differs{false};
        rd.push_back(timed(o.planes, t, [&](std::size_t i) {
          const io::FitsImage img = io::read_fits_image(name(i, ".fits"));
          if (i == 0 && (img.pixels.size() != n || img.pixels[1] != pixels[1] || !std::isnan(img.pixels[0]) ||
                         img.pixels[n - 1] != pixels[n - 1]))
            differs = true;
        }));
        if (differs) {
          std::fprintf(stderr, "bench io: %s read back differs from what was written\n", name(0, ".fits").c_str());
          rc = 4;
        }
        // The page cache: the same bytes with plain write() into new files, then read().
        for (std::size_t i = 0; i < o.planes; ++i) ::unlink(name(i, ".bin").c_str());
        ::sync();
        cwr.push_back(timed(o.planes, t, [&](std::size_t i) {
          const int fd = ::open(name(i, ".bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
          std::size_t done = 0;
          const auto* p = reinterpret_cast<const char*>(pixels.data());
          while (fd >= 0 && done < file_bytes) {
            const std::size_t m = std::min(n * 4, file_bytes - done);
            if (::write(fd, p, m) <= 0) break;
            done += m;
          }
          if (fd >= 0) ::close(fd);
        }));
        if (o.cold)
          for (std::size_t i = 0; i < o.planes; ++i) drop_cache(name(i, ".bin"));
        crd.push_back(timed(o.planes, t, [&](std::size_t i) {
          thread_local std::vector<char> buffer;
          buffer.resize(file_bytes);
          const int fd = ::open(name(i, ".bin").c_str(), O_RDONLY);
          std::size_t done = 0;
          while (fd >= 0 && done < file_bytes) {
            const ssize_t m = ::read(fd, buffer.data() + done, file_bytes - done);
            if (m <= 0) break;
            done += static_cast<std::size_t>(m);
          }
          if (fd >= 0) ::close(fd);
        }));
      }
      rows.push_back({path, t, bytes / median(rd) / 1e9, bytes / median(wr) / 1e9, bytes / median(crd) / 1e9,
                      bytes / median(cwr) / 1e9, median(cm)});
    }
  }
  io::set_fits_raw_io(true);

  std::printf("bench io: %zu x %zu^2 float planes (%.0f MB of pixels), %zu cores, %s cache, %s, median of %zu\n",
              o.planes, o.size, bytes / 1e6, cores, o.cold ? "cold" : "warm", dir.c_str(), o.repeats);
  std::printf("writes are staged and committed (durable; commit ms: its syncs and renames); page cache: plain "
              "write()/read() of as many bytes into new files, no sync\n\n");
  std::printf("%-8s %7s %10s %11s %10s %17s %18s\n", "path", "threads", "read GB/s", "write GB/s", "commit ms",
              "page-cache read", "page-cache write");
  for (const Row& r : rows)
    std::printf("%-8s %7zu %10.2f %11.2f %10.1f %17.2f %18.2f\n", r.path.c_str(), r.threads, r.read, r.write,
                r.commit_ms, r.cache_read, r.cache_write);
  if (o.dir.empty()) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  } else {
    for (std::size_t i = 0; i < o.planes; ++i) ::unlink(name(i, ".bin").c_str());
  }
  return rc;
}

}  // namespace gpuclean::app
