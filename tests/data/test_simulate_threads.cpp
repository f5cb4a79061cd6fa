// `gpuclean simulate --channels N --threads T`: channels simulated, and their files written, in
// parallel give the single-threaded result bit for bit, whatever the thread count.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "data/simulate_channels.hpp"
#include "io/fits_reader.hpp"
#include "tests/support/temp_dir.hpp"

namespace gd = gpuclean::data;

namespace {

gd::SimulationSettings field() {
  gd::SimulationSettings s;  // with noise: each channel's noise stream must not depend on the threads
  s.size = 64;
  s.seed = 11;
  s.gaussians = 4;
  return s;
}

gd::ChannelSettings band(std::size_t channels, std::size_t threads) {
  gd::ChannelSettings c;
  c.channels = channels;
  c.bandwidth_hz = 2e8;
  c.spectral_index_min = -1.0;
  c.spectral_index_max = 0.5;
  c.threads = threads;
  return c;
}

// The header without the cards that record when the file was written.
std::vector<std::string> lasting_cards(const gpuclean::io::FitsHeader& header) {
  std::vector<std::string> cards;
  for (const auto& card : header.cards()) {
    const std::string kw = gpuclean::io::FitsHeader::keyword_of(card);
    if (kw != "DATE" && kw != "CHECKSUM" && kw != "DATASUM") cards.push_back(card);
  }
  return cards;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(SimulateThreads, ChannelsInParallelAreTheSerialOnesBitForBit) {
  const auto s = field();
  // (channels, threads): more channels than threads, more threads than channels (FFTs with
  // several threads each), and every core.
  for (const auto [channels, threads] : {std::pair<std::size_t, std::size_t>{5, 3}, {2, 4}, {7, 0}}) {
    SCOPED_TRACE(testing::Message() << channels << " channels, " << threads << " threads");
    const auto serial = gd::simulate_channels(s, band(channels, 1));
    const auto parallel = gd::simulate_channels(s, band(channels, threads));
    ASSERT_EQ(parallel.channels.size(), channels);
    for (std::size_t i = 0; i < channels; ++i) {
      SCOPED_TRACE(testing::Message() << "channel " << i);
      EXPECT_EQ(parallel.channels[i].dirty, serial.channels[i].dirty);
      EXPECT_EQ(parallel.channels[i].psf, serial.channels[i].psf);
      EXPECT_EQ(parallel.channels[i].truth, serial.channels[i].truth);
    }
    EXPECT_EQ(parallel.image_weights, serial.image_weights);
    EXPECT_EQ(parallel.spectral_indices, serial.spectral_indices);
    const auto mfs_serial = gd::mfs_images(serial, 1), mfs_parallel = gd::mfs_images(parallel, threads);
    EXPECT_EQ(mfs_parallel.dirty, mfs_serial.dirty);
    EXPECT_EQ(mfs_parallel.psf, mfs_serial.psf);
  }
}

TEST(SimulateThreads, FilesWrittenInParallelAreTheSerialOnes) {
  gpuclean::test::TempDir tmp;
  const auto s = field();
  for (const std::size_t threads : {std::size_t{1}, std::size_t{4}}) {
    const auto c = band(6, threads);
    gd::write_channel_simulation(gd::simulate_channels(s, c), s, c, tmp.file("t" + std::to_string(threads)), "sim",
                                 false, "gpuclean simulate");
  }
  for (const auto& name : gd::channel_output_names("sim", 6)) {
    SCOPED_TRACE(name);
    const std::string serial = tmp.file("t1/" + name), parallel = tmp.file("t4/" + name);
    if (name == "sources.csv") {
      EXPECT_EQ(text_of(parallel), text_of(serial));
      continue;
    }
    const auto a = gpuclean::io::read_fits_image(serial), b = gpuclean::io::read_fits_image(parallel);
    EXPECT_EQ(b.pixels, a.pixels);
    EXPECT_EQ(lasting_cards(b.header), lasting_cards(a.header));
  }
}
