#pragma once
// Small MeasurementSets for the reader's tests, made at test time by data/simulate_ms.py and
// changed by tests/io/ms_fixture.py (python-casacore), and the reference reading of them that
// ms_fixture.py's `expect` writes.

#include <complex>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean::test {

/// Debian's interpreter, where python3-casacore installs (GPUCLEAN_PYTHON overrides it).
inline std::string ms_python() { return env_or("GPUCLEAN_PYTHON", "/usr/bin/python3"); }

inline void run_python(const TempDir& dir, const std::string& args) {
  const CommandResult r = run_command(dir, ms_python() + " " + args);
  if (r.code != 0) throw std::runtime_error("python3 " + args + " failed: " + r.err);
}

/// A 168-row MS (8 antennas, 6 times, 3 channels, XX and YY unless `correlations` is "i"),
/// changed by `edits` (ms_fixture.py edit's options).
inline std::string make_ms(const TempDir& dir, const std::string& name, const std::string& edits = "",
                           const std::string& correlations = "xxyy") {
  const std::string ms = dir.file(name);
  run_python(dir, source_dir() + "/data/simulate_ms.py --out " + ms + " --sky points --antennas 8 --hours 1"
                  " --integration 600 --channels 3 --noise 0.01 --correlations " + correlations);
  if (!edits.empty()) run_python(dir, source_dir() + "/tests/io/ms_fixture.py edit " + ms + " " + edits);
  return ms;
}

/// ms_fixture.py's reading of the MS: the rows to keep and their Stokes values and weights.
struct ExpectedVis {
  std::size_t rows = 0, channels = 0;
  std::vector<std::uint64_t> row;
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis;
  std::vector<float> weight;
};

inline ExpectedVis expected_vis(const TempDir& dir, const std::string& ms, const std::string& options = "") {
  const std::string out = dir.file("expected.txt");
  run_python(dir, source_dir() + "/tests/io/ms_fixture.py expect " + ms + " " + out + " " + options);
  std::ifstream in(out);
  ExpectedVis e;
  in >> e.rows >> e.channels;
  for (std::size_t r = 0; r < e.rows; ++r) {
    std::uint64_t row;
    double u, v, w;
    in >> row >> u >> v >> w;
    e.row.push_back(row), e.u.push_back(u), e.v.push_back(v), e.w.push_back(w);
    for (std::size_t c = 0; c < e.channels; ++c) {
      float re, im, wt;
      in >> re >> im >> wt;
      e.vis.emplace_back(re, im);
      e.weight.push_back(wt);
    }
  }
  if (!in) throw std::runtime_error("cannot read " + out);
  return e;
}

}  // namespace gpuclean::test
