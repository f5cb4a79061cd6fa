// WSClean channel sets: channels and polarisations are found from the names, PSFs without a
// polarisation part, the MFS files belong to the set; a missing channel or PSF is named.
#include <gtest/gtest.h>

#include <fstream>

#include "io/fits_error.hpp"
#include "io/wsclean_channels.hpp"
#include "tests/support/temp_dir.hpp"

namespace gio = gpuclean::io;
using gpuclean::test::TempDir;

namespace {
void touch(const std::string& path) { std::ofstream(path) << "x"; }

std::string error_of(const std::string& prefix) {
  try {
    gio::find_wsclean_channels(prefix);
  } catch (const gio::FitsError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(WscleanChannels, NamesFollowWsclean) {
  EXPECT_EQ(gio::wsclean_name("out/obs", 3, "", "image"), "out/obs-0003-image.fits");
  EXPECT_EQ(gio::wsclean_name("obs", -1, "Q", "residual"), "obs-MFS-Q-residual.fits");
  EXPECT_EQ(gio::wsclean_name("obs", 12345, "I", "model"), "obs-12345-I-model.fits");
}

TEST(WscleanChannels, FindsChannelsPsfsAndTheMfsFiles) {
  TempDir dir;
  for (int c = 0; c < 3; ++c) {
    touch(gio::wsclean_name(dir.file("obs"), c, "", "dirty"));
    touch(gio::wsclean_name(dir.file("obs"), c, "", "psf"));
  }
  touch(dir.file("obs-MFS-dirty.fits"));
  touch(dir.file("obs-MFS-psf.fits"));
  touch(dir.file("other-dirty.fits"));
  const gio::WscleanChannelSet set = gio::find_wsclean_channels(dir.file("obs"));
  EXPECT_EQ(set.channels, 3u);
  EXPECT_TRUE(set.polarizations.empty());
  ASSERT_EQ(set.dirty.size(), 1u);
  EXPECT_EQ(set.dirty[0][2], dir.file("obs-0002-dirty.fits"));
  EXPECT_EQ(set.psf[1], dir.file("obs-0001-psf.fits"));
  EXPECT_EQ(set.mfs_dirty_first_pol, dir.file("obs-MFS-dirty.fits"));
  EXPECT_EQ(set.mfs_psf, dir.file("obs-MFS-psf.fits"));
  // One of the set's files names the set too.
  EXPECT_EQ(gio::find_wsclean_channels(dir.file("obs-MFS-dirty.fits")).prefix, dir.file("obs"));

  EXPECT_TRUE(gio::is_wsclean_set_member(dir.file("obs-0002-dirty.fits")));
  EXPECT_TRUE(gio::is_wsclean_set_member(dir.file("obs-MFS-dirty.fits")));
  EXPECT_FALSE(gio::is_wsclean_set_member(dir.file("other-dirty.fits")));
  // Four digits in an ordinary name do not make a set without its channel 0000.
  touch(dir.file("field-2024-dirty.fits"));
  EXPECT_FALSE(gio::is_wsclean_set_member(dir.file("field-2024-dirty.fits")));
}

TEST(WscleanChannels, PolarisationsInStokesOrderWithSharedPsfs) {
  TempDir dir;
  for (const char* pol : {"V", "I", "U", "Q"})
    for (int c = 0; c < 2; ++c) touch(gio::wsclean_name(dir.file("obs"), c, pol, "dirty"));
  for (int c = 0; c < 2; ++c) touch(gio::wsclean_name(dir.file("obs"), c, "", "psf"));
  const gio::WscleanChannelSet set = gio::find_wsclean_channels(dir.file("obs"));
  EXPECT_EQ(set.polarizations, (std::vector<std::string>{"I", "Q", "U", "V"}));
  EXPECT_EQ(set.dirty[3][1], dir.file("obs-0001-V-dirty.fits"));
  EXPECT_EQ(set.psf[0], dir.file("obs-0000-psf.fits"));
}

TEST(WscleanChannels, NamesAMissingChannelOrPsf) {
  TempDir dir;
  for (int c : {0, 1, 3}) touch(gio::wsclean_name(dir.file("obs"), c, "", "dirty"));
  for (int c = 0; c < 4; ++c) touch(gio::wsclean_name(dir.file("obs"), c, "", "psf"));
  EXPECT_NE(error_of(dir.file("obs")).find("obs-0002-dirty.fits"), std::string::npos) << error_of(dir.file("obs"));
  touch(dir.file("obs-0002-dirty.fits"));
  std::filesystem::remove(dir.file("obs-0001-psf.fits"));
  EXPECT_NE(error_of(dir.file("obs")).find("obs-0001-psf.fits"), std::string::npos) << error_of(dir.file("obs"));
  EXPECT_NE(error_of(dir.file("nothing")).find("nothing-0000-dirty.fits"), std::string::npos);

  // A folder's sets: a broken one comes back with its prefix only, for its job to report.
  for (int c = 0; c < 2; ++c) {
    touch(gio::wsclean_name(dir.file("good"), c, "", "dirty"));
    touch(gio::wsclean_name(dir.file("good"), c, "", "psf"));
  }
  const auto sets = gio::find_wsclean_sets(dir.path().string());
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].prefix, dir.file("good"));
  EXPECT_EQ(sets[0].channels, 2u);
  EXPECT_EQ(sets[1].prefix, dir.file("obs"));
  EXPECT_EQ(sets[1].channels, 0u);
}
