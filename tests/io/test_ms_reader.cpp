// The MeasurementSet reader against python-casacore's reading of the same MS (ms_fixture.py
// expect), on MSs that data/simulate_ms.py makes at test time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "clean/errors.hpp"
#include "io/ms/ms_error.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_reader.hpp"
#include "io/ms/ms_selection.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean::io::ms {
namespace {

using test::TempDir;

MsSelection select_one(const std::string& ms, const SelectionRequest& request = {}) {
  return select_visibilities({read_ms_metadata(ms)}, request).front();
}

/// Every kept row, uvw, value and weight equal to the reference (the text round-trips float and
/// double exactly, and both sides do the same IEEE operations).
void expect_same(const VisChunk& got, const test::ExpectedVis& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.channels, want.channels);
  EXPECT_EQ(got.row, want.row);
  EXPECT_EQ(got.u, want.u);
  EXPECT_EQ(got.v, want.v);
  EXPECT_EQ(got.w, want.w);
  std::size_t value_diffs = 0, weight_diffs = 0;
  for (std::size_t i = 0; i < want.vis.size(); ++i) {
    value_diffs += got.vis[i] != want.vis[i];
    weight_diffs += got.weight[i] != want.weight[i];
  }
  EXPECT_EQ(value_diffs, 0u);
  EXPECT_EQ(weight_diffs, 0u);
}

std::size_t zero_weights(const VisChunk& c) { return std::count(c.weight.begin(), c.weight.end(), 0.0f); }

template <typename F>
MsError::Kind error_kind(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const MsError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no MsError";
  return MsError::Kind::kIo;
}

TEST(MsMetadata, ReadsTheSubtables) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms");
  const MsMetadata m = read_ms_metadata(ms);
  EXPECT_EQ(m.rows, 168u);
  EXPECT_EQ(m.cross_rows.at({0, 0}), 168u);
  EXPECT_EQ(m.autocorrelation_rows, 0u);
  ASSERT_EQ(m.spectral_windows.size(), 1u);
  // simulate_ms.py: 3 channels of 856/3 MHz centred on 1.284 GHz.
  const double width = 856e6 / 3;
  ASSERT_EQ(m.spectral_windows[0].freq_hz.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(m.spectral_windows[0].freq_hz[c], 1.284e9 + (c - 1) * width, 1e-3);
    EXPECT_NEAR(m.spectral_windows[0].width_hz[c], width, 1e-6);
  }
  ASSERT_EQ(m.polarizations.size(), 1u);
  EXPECT_EQ(m.polarizations[0], (std::vector<int>{kCorrXX, kCorrYY}));
  ASSERT_EQ(m.fields.size(), 1u);
  EXPECT_EQ(m.fields[0].name, "SIM");
  EXPECT_TRUE(m.fields[0].direction_problem.empty());
  EXPECT_NEAR(m.fields[0].ra_rad, 53.0 * M_PI / 180, 1e-12);
  EXPECT_NEAR(m.fields[0].dec_rad, -28.0 * M_PI / 180, 1e-12);
  EXPECT_EQ(m.telescope, "MeerKAT");
  EXPECT_FALSE(m.weight_spectrum_defined);
  EXPECT_EQ(default_data_column(m), "DATA");
}

TEST(MsReader, StokesIWithFlagsFlagRowWeightsAndNonFiniteAsPythonCasacore) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --flag-row --weights --nan");
  const test::ExpectedVis want = test::expected_vis(dir, ms);
  ReadTally tally;
  const VisChunk got = read_visibilities(select_one(ms), MsReader::kDefaultChunkRows, &tally);
  expect_same(got, want);
  EXPECT_EQ(tally.flag_row_rows, 10u);  // rows 0, 17, ..., 153
  // The edits reach the result: flags zero about a fifth of the Stokes I weights, FLAG_ROW more.
  EXPECT_GT(zero_weights(got), got.weight.size() / 6);
  EXPECT_LT(zero_weights(got), got.weight.size() / 2);
  EXPECT_EQ(tally.weighted_samples, got.weight.size() - zero_weights(got));
}

TEST(MsReader, ChunkBoundariesDoNotChangeTheResult) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --flag-row --weights --autocorrelations 7");
  const test::ExpectedVis want = test::expected_vis(dir, ms);
  for (std::size_t rows : {1, 13, 100, 175, 1 << 16}) {
    SCOPED_TRACE(rows);
    expect_same(read_visibilities(select_one(ms), rows), want);
  }
  MsReader reader(select_one(ms), 50);
  VisChunk chunk;
  std::size_t chunks = 0;
  while (reader.next(chunk)) {
    ++chunks;
    EXPECT_LE(chunk.rows, 50u);
  }
  EXPECT_EQ(chunks, 4u);  // 175 rows
  EXPECT_EQ(reader.tally().rows_read, 175u);
}

TEST(MsReader, DropsAutocorrelations) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--autocorrelations 9");
  const MsMetadata m = read_ms_metadata(ms);
  EXPECT_EQ(m.autocorrelation_rows, 9u);
  ReadTally tally;
  const VisChunk got = read_visibilities(select_one(ms), MsReader::kDefaultChunkRows, &tally);
  EXPECT_EQ(tally.autocorrelation_rows, 9u);
  EXPECT_EQ(got.rows, 168u);
  EXPECT_EQ(got.row.back(), 167u);
  expect_same(got, test::expected_vis(dir, ms));
}

TEST(MsReader, PrefersWeightSpectrumOverWeight) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--weights --weight-spectrum --flags");
  const MsSelection s = select_one(ms);
  EXPECT_TRUE(s.weight_spectrum);
  const VisChunk got = read_visibilities(s);
  expect_same(got, test::expected_vis(dir, ms));
  // WEIGHT would give other weights: the choice is seen.
  MsSelection from_weight = s;
  from_weight.weight_spectrum = false;
  EXPECT_NE(read_visibilities(from_weight).weight, got.weight);
}

TEST(MsReader, CorrectedDataIsTheDefaultWhenPresent) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--corrected");
  const MsSelection s = select_one(ms);
  EXPECT_EQ(s.data_column, "CORRECTED_DATA");
  const VisChunk corrected = read_visibilities(s);
  expect_same(corrected, test::expected_vis(dir, ms, "--column CORRECTED_DATA"));
  SelectionRequest request;
  request.data_column = "DATA";
  const VisChunk data = read_visibilities(select_one(ms, request));
  expect_same(data, test::expected_vis(dir, ms, "--column DATA"));
  EXPECT_NE(data.vis, corrected.vis);
}

TEST(MsSelection, MissingCorrectedDataIsRefused) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms");
  SelectionRequest request;
  request.data_column = "CORRECTED_DATA";
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms, request); }, &message), MsError::Kind::kMissingColumn);
  EXPECT_NE(message.find("CORRECTED_DATA"), std::string::npos) << message;
  EXPECT_NE(message.find(ms), std::string::npos) << message;
}

TEST(MsSelection, SeveralFieldsNeedField) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--second-field --flags");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms); }, &message), MsError::Kind::kLayout);
  EXPECT_NE(message.find("-field"), std::string::npos) << message;
  for (int field : {0, 1}) {
    SCOPED_TRACE(field);
    SelectionRequest request;
    request.fields = {field};
    const MsSelection s = select_one(ms, request);
    EXPECT_EQ(s.rows, field == 1 ? 34u : 134u);  // every 5th of 168 rows is field 1
    ReadTally tally;
    const VisChunk got = read_visibilities(s, MsReader::kDefaultChunkRows, &tally);
    EXPECT_EQ(tally.other_rows, 168u - s.rows);
    expect_same(got, test::expected_vis(dir, ms, "--field " + std::to_string(field)));
  }
  SelectionRequest absent;
  absent.fields = {7};
  EXPECT_EQ(error_kind([&] { select_one(ms, absent); }), MsError::Kind::kSelection);
}

TEST(MsSelection, NoRowsAreRefused) {
  TempDir dir;
  // A field the FIELD table has but no row observes: without -field the other is taken.
  const std::string ms = test::make_ms(dir, "a.ms", "--extra-field");
  EXPECT_EQ(select_one(ms).field, 0);
  SelectionRequest request;
  request.fields = {1};
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms, request); }, &message), MsError::Kind::kEmpty);
  EXPECT_NE(message.find("no cross-correlation rows of field 1"), std::string::npos) << message;
  const std::string autos = test::make_ms(dir, "autos.ms", "--only-autocorrelations");
  EXPECT_EQ(error_kind([&] { select_one(autos); }, &message), MsError::Kind::kEmpty);
  EXPECT_NE(message.find("no cross-correlation rows"), std::string::npos) << message;
}

TEST(MsSelection, SeveralSpectralWindowsAreNotSupportedYet) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--second-spw");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms); }, &message), MsError::Kind::kLayout);
  EXPECT_NE(message.find("not supported yet"), std::string::npos) << message;
}

TEST(MsReader, AnICorrelationIsCopiedWithItsWeight) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--weights --flags", "i");
  const MsSelection s = select_one(ms);
  EXPECT_EQ(s.rule.kind, StokesRule::Kind::kCopy);
  expect_same(read_visibilities(s), test::expected_vis(dir, ms));
}

TEST(MsReader, OneCorrelationWithPol) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--weights --flags");
  for (const char* pol : {"xx", "yy"}) {
    SCOPED_TRACE(pol);
    SelectionRequest request;
    request.pol = parse_pol(pol);
    expect_same(read_visibilities(select_one(ms, request)), test::expected_vis(dir, ms, std::string("--pol ") + pol));
  }
  SelectionRequest rr;
  rr.pol = PolRequest::kRR;
  EXPECT_EQ(error_kind([&] { select_one(ms, rr); }), MsError::Kind::kLayout);
  EXPECT_THROW(parse_pol("q"), clean::InvalidSettings);
  EXPECT_THROW(parse_pol("iquv"), clean::InvalidSettings);
}

TEST(MsSelection, ChannelRange) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--weights --flags --weight-spectrum");
  SelectionRequest request;
  request.channel_begin = 1;
  request.channel_end = 3;
  const MsSelection s = select_one(ms, request);
  ASSERT_EQ(s.freq_hz.size(), 2u);
  EXPECT_EQ(s.freq_hz[0], read_ms_metadata(ms).spectral_windows[0].freq_hz[1]);
  expect_same(read_visibilities(s), test::expected_vis(dir, ms, "--channels 1 3"));
  request.channel_end = 4;
  EXPECT_EQ(error_kind([&] { select_one(ms, request); }), MsError::Kind::kSelection);
  request.channel_begin = 2;
  request.channel_end = 2;
  EXPECT_THROW(select_one(ms, request), clean::InvalidSettings);
}

TEST(MsReader, EverythingFlaggedIsRefused) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flag-all");
  std::string message;
  EXPECT_EQ(error_kind([&] { read_visibilities(select_one(ms)); }, &message), MsError::Kind::kEmpty);
  EXPECT_NE(message.find("flagged"), std::string::npos) << message;
}

TEST(MsMetadata, NotAMeasurementSet) {
  TempDir dir;
  EXPECT_EQ(error_kind([&] { read_ms_metadata(dir.file("absent.ms")); }), MsError::Kind::kNotMs);
  EXPECT_EQ(error_kind([&] { read_ms_metadata(test::source_dir() + "/data/sample/dirty.fits"); }),
            MsError::Kind::kNotMs);
  EXPECT_EQ(error_kind([&] { read_ms_metadata(dir.path().string()); }), MsError::Kind::kNotMs);
  // A table that is not an MS (the FIELD subtable) is refused too.
  const std::string ms = test::make_ms(dir, "a.ms");
  EXPECT_EQ(error_kind([&] { read_ms_metadata(ms + "/FIELD"); }), MsError::Kind::kNotMs);
  // MsError is an InvalidInput: the CLI maps it to exit code 3.
  EXPECT_THROW(read_ms_metadata(dir.file("absent.ms")), clean::InvalidInput);
}

TEST(MsSelection, SeveralMeasurementSetsOfOneField) {
  TempDir dir;
  const std::string a = test::make_ms(dir, "a.ms"), b = test::make_ms(dir, "b.ms", "--corrected");
  // The first MS decides the default column (DATA); b has both.
  const std::vector<MsSelection> s = select_visibilities({read_ms_metadata(a), read_ms_metadata(b)}, {});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].data_column, "DATA");
  // b first: CORRECTED_DATA, which a lacks.
  std::string message;
  EXPECT_EQ(error_kind([&] { select_visibilities({read_ms_metadata(b), read_ms_metadata(a)}, {}); }, &message),
            MsError::Kind::kMissingColumn);
  EXPECT_NE(message.find(a), std::string::npos) << message;
}

TEST(MsReader, UndefinedWeightSpectrumFallsBackToWeight) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--weights --weight-spectrum-undefined");
  const MsMetadata m = read_ms_metadata(ms);
  EXPECT_TRUE(m.has_column("WEIGHT_SPECTRUM"));
  EXPECT_FALSE(m.weight_spectrum_defined);
  expect_same(read_visibilities(select_one(ms)), test::expected_vis(dir, ms));
}

TEST(MsMetadata, PhaseCentreInAnotherFrameIsConvertedToJ2000) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--frame GALACTIC");
  const test::CommandResult r =
      test::run_command(dir, test::ms_python() + " " + test::source_dir() + "/tests/io/ms_fixture.py direction " + ms);
  ASSERT_EQ(r.code, 0) << r.err;
  double ra = 0, dec = 0;
  std::istringstream(r.out) >> ra >> dec;
  const MsSelection s = select_one(ms);
  EXPECT_NEAR(s.ra_rad, ra, 1e-12);
  EXPECT_NEAR(s.dec_rad, dec, 1e-12);
  EXPECT_GT(std::abs(s.ra_rad - 53.0 * M_PI / 180), 0.1);  // not the J2000 reading of the same numbers
}

TEST(MsSelection, PhaseCentreThatNeedsAnObservatoryIsRefused) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--frame AZEL");
  const MsMetadata m = read_ms_metadata(ms);  // reading is fine; selecting the field is not
  EXPECT_FALSE(m.fields[0].direction_problem.empty());
  std::string message;
  EXPECT_EQ(error_kind([&] { select_visibilities({m}, {}); }, &message), MsError::Kind::kLayout);
  EXPECT_NE(message.find("J2000"), std::string::npos) << message;
}

TEST(MsSelection, DecreasingChannelsAreRefused) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--descending");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms); }, &message), MsError::Kind::kLayout);
  EXPECT_NE(message.find("increase"), std::string::npos) << message;
}

TEST(MsSelection, MeasurementSetsOfDifferentPhaseCentresAreRefused) {
  TempDir dir;
  const std::string a = test::make_ms(dir, "a.ms"), b = test::make_ms(dir, "b.ms", "--shift-centre");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_visibilities({read_ms_metadata(a), read_ms_metadata(b)}, {}); }, &message),
            MsError::Kind::kLayout);
  EXPECT_NE(message.find("phase centre"), std::string::npos) << message;
}

}  // namespace
}  // namespace gpuclean::io::ms
