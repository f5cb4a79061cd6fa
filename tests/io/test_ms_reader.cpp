// The MeasurementSet reader against python-casacore's reading of the same MS (ms_fixture.py
// expect), on MSs that data/simulate_ms.py makes at test time.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "clean/errors.hpp"
#include "io/ms/ms_error.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_reader.hpp"
#include "io/ms/ms_writer.hpp"
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

// Issue 45 (ALMA: a 64-channel spw beside its 1-channel average): with -spws, the cells of the other
// spw's rows may have another shape; only the selected rows' cells are read.
TEST(MsReader, SpwsOfDifferentWidthsAreReadOneAtATime) {
  TempDir dir;
  const std::string a = test::make_ms(dir, "a.ms", "--weights --flags --weight-spectrum");
  const std::string b = dir.file("b.ms");
  std::filesystem::copy(a, b, std::filesystem::copy_options::recursive);
  test::run_python(dir, test::source_dir() + "/tests/io/ms_fixture.py edit " + b + " --second-spw-one-channel");
  const VisChunk all = read_visibilities(select_one(a));  // as python-casacore reads it: the tests above
  ASSERT_EQ(all.rows, 168u);
  for (std::size_t spw : {0, 1}) {
    SCOPED_TRACE(spw);
    SelectionRequest request;
    request.spws = {spw};
    const MsSelection s = select_one(b, request);
    const std::size_t nchan = spw == 0 ? 3 : 1;
    ASSERT_EQ(s.freq_hz.size(), nchan);
    for (std::size_t rows : {10, 1 << 16}) {  // chunks of mixed rows, and chunks of spw 0's rows only
      const VisChunk got = read_visibilities(s, rows);
      EXPECT_EQ(got.rows, spw == 0 ? 144u : 24u);  // rows 1, 8, ..., 162 are spw 1's
      std::size_t wrong = 0;
      for (std::size_t k = 0; k < got.rows; ++k) {
        const std::uint64_t r = got.row[k];
        EXPECT_EQ(r % 7 == 1, spw == 1) << r;
        for (std::size_t c = 0; c < nchan; ++c)
          wrong += got.vis[k * nchan + c] != all.vis[r * 3 + c] || got.weight[k * nchan + c] != all.weight[r * 3 + c];
      }
      EXPECT_EQ(wrong, 0u);
    }
  }
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
    request.pol = parse_pol_list(pol).front();
    expect_same(read_visibilities(select_one(ms, request)), test::expected_vis(dir, ms, std::string("--pol ") + pol));
  }
  SelectionRequest rr;
  rr.pol = PolRequest::kRR;
  EXPECT_EQ(error_kind([&] { select_one(ms, rr); }), MsError::Kind::kLayout);
  // Q needs XX and YY: the simulated MS has them; U needs XY and YX, which it lacks.
  SelectionRequest u;
  u.pol = PolRequest::kU;
  EXPECT_EQ(error_kind([&] { select_one(ms, u); }), MsError::Kind::kLayout);
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

/// `f` throws an MsError of `kind` whose message holds every one of `parts` (the MS, the table or
/// column at fault) and is one line.
template <typename F>
void expect_refused(F&& f, MsError::Kind kind, const std::vector<std::string>& parts) {
  std::string message;
  EXPECT_EQ(error_kind(f, &message), kind) << message;
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << ": " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(MsMetadata, NotAMeasurementSet) {
  TempDir dir;
  const std::string absent = dir.file("absent.ms"), file = test::source_dir() + "/data/sample/dirty.fits";
  expect_refused([&] { read_ms_metadata(absent); }, MsError::Kind::kNotMs, {absent, "does not exist"});
  expect_refused([&] { read_ms_metadata(file); }, MsError::Kind::kNotMs, {file, "is a file"});
  expect_refused([&] { read_ms_metadata(dir.path().string()); }, MsError::Kind::kNotMs,
                 {dir.path().string(), "no table.dat"});
  // A table that is not an MS (the FIELD subtable) is refused too.
  const std::string ms = test::make_ms(dir, "a.ms");
  expect_refused([&] { read_ms_metadata(ms + "/FIELD"); }, MsError::Kind::kNotMs,
                 {ms + "/FIELD", "not a MeasurementSet"});
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

// Issue 45: an MS whose channel frequencies decrease (WSRT, lower sidebands) is read with its
// channels in increasing frequency, as WSClean 3.1 sorts them; -channel-range counts in that order;
// MODEL_DATA goes back to the MS channel each value belongs to.

/// a.ms with per-channel weights and flags, and b.ms: a copy whose channels are listed in decreasing
/// frequency (the same samples: ms_fixture.py --reverse-channels).
void make_reversed_pair(const TempDir& dir, std::string* a, std::string* b, const std::string& b_edits = "") {
  *a = test::make_ms(dir, "a.ms", "--weights --flags --weight-spectrum");
  *b = dir.file("b.ms");
  std::filesystem::copy(*a, *b, std::filesystem::copy_options::recursive);
  test::run_python(dir, test::source_dir() + "/tests/io/ms_fixture.py edit " + *b + " --reverse-channels " + b_edits);
}

TEST(MsReader, DecreasingChannelsAreReadInIncreasingFrequency) {
  TempDir dir;
  std::string a, b;
  make_reversed_pair(dir, &a, &b);
  const MsSelection sa = select_one(a), sb = select_one(b);
  EXPECT_FALSE(sa.reversed);
  ASSERT_TRUE(sb.reversed);
  const std::vector<double> stored = read_ms_metadata(b).spectral_windows[0].freq_hz;
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_GT(stored[0], stored[2]);  // the MS's own order decreases
  EXPECT_EQ(sb.freq_hz, sa.freq_hz);
  EXPECT_EQ(sb.width_hz, sa.width_hz);
  EXPECT_EQ(sb.channel_begin, 0u);
  EXPECT_EQ(sb.channel_end, 3u);
  // b's samples in increasing frequency are a's, exactly (python-casacore's reading of a).
  const test::ExpectedVis want = test::expected_vis(dir, a);
  for (std::size_t rows : {13, 1 << 16}) {
    SCOPED_TRACE(rows);
    expect_same(read_visibilities(sb, rows), want);
  }
  // and not b's own order (the per-channel weights and flags differ from channel to channel).
  const VisChunk got = read_visibilities(sb);
  const test::ExpectedVis own = test::expected_vis(dir, b);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < own.weight.size(); ++i) differ += got.weight[i] != own.weight[i];
  EXPECT_GT(differ, own.weight.size() / 2);
}

TEST(MsSelection, ChannelRangeOfDecreasingChannelsCountsInIncreasingFrequency) {
  TempDir dir;
  std::string a, b;
  make_reversed_pair(dir, &a, &b, "--negative-width");
  SelectionRequest request;
  request.channel_begin = 0;
  request.channel_end = 2;  // the two lowest frequencies: MS channels 1 and 2 of b
  const MsSelection s = select_one(b, request);
  EXPECT_EQ(s.channel_begin, 1u);
  EXPECT_EQ(s.channel_end, 3u);
  const MsSpectralWindow spw = read_ms_metadata(a).spectral_windows[0];
  EXPECT_EQ(s.freq_hz, std::vector<double>(spw.freq_hz.begin(), spw.freq_hz.begin() + 2));
  // CHAN_WIDTH as stored, sign included (WSClean 3.1's band edges use it so).
  EXPECT_EQ(s.width_hz, std::vector<double>(2, -spw.width_hz[0]));
  expect_same(read_visibilities(s), test::expected_vis(dir, a, "--channels 0 2"));
  request.channel_begin = 2;
  request.channel_end = 3;
  const MsSelection top = select_one(b, request);
  EXPECT_EQ(top.channel_begin, 0u);
  EXPECT_EQ(top.channel_end, 1u);
  EXPECT_EQ(top.freq_hz, std::vector<double>{spw.freq_hz[2]});
  request.channel_end = 4;
  EXPECT_EQ(error_kind([&] { select_one(b, request); }), MsError::Kind::kSelection);
}

TEST(ModelDataWriter, DecreasingChannelsGetTheirOwnValues) {
  TempDir dir;
  std::string a, b;
  make_reversed_pair(dir, &a, &b);
  for (const std::string& ms : {a, b}) {
    const MsSelection s = select_one(ms);
    const VisChunk rows = read_visibilities(s);
    std::vector<std::complex<float>> values(rows.rows * 3);  // [row][channel in increasing frequency]
    for (std::size_t k = 0; k < rows.rows; ++k)
      for (std::size_t c = 0; c < 3; ++c) values[k * 3 + c] = {static_cast<float>(k), static_cast<float>(c + 1)};
    ModelDataWriter(s).write(rows.row, values);
    // python-casacore's reading of MODEL_DATA, in the MS's own channel order.
    const test::ExpectedVis got = test::expected_vis(dir, ms, "--column MODEL_DATA");
    ASSERT_EQ(got.rows, rows.rows);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < rows.rows; ++k)
      for (std::size_t c = 0; c < 3; ++c) wrong += got.vis[k * 3 + c] != values[k * 3 + (ms == b ? 2 - c : c)];
    EXPECT_EQ(wrong, 0u) << ms;
  }
}

TEST(MsSelection, ChannelsNeitherIncreasingNorDecreasingAreRefused) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--unordered-channels");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_one(ms); }, &message), MsError::Kind::kLayout);
  EXPECT_NE(message.find("neither increase nor decrease strictly (channel 2 after 1)"), std::string::npos) << message;
}

TEST(MsSelection, MeasurementSetsOfDifferentPhaseCentresAreRefused) {
  TempDir dir;
  const std::string a = test::make_ms(dir, "a.ms"), b = test::make_ms(dir, "b.ms", "--shift-centre");
  std::string message;
  EXPECT_EQ(error_kind([&] { select_visibilities({read_ms_metadata(a), read_ms_metadata(b)}, {}); }, &message),
            MsError::Kind::kLayout);
  EXPECT_NE(message.find("phase centre"), std::string::npos) << message;
}

// Issue 45: an MS that casacore cannot open is refused in one sentence that names the MS and the
// table or column at fault, by read_ms_metadata (the first to open it), count_timesteps and MsReader.

TEST(MsMetadata, AStorageManagerCasacoreCannotLoadNamesTheColumn) {
  // As a LOFAR raw MS without the LofarStMan library: casacore's own message names only the library.
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--storage-manager LofarStMan");
  const std::vector<std::string> parts = {ms, "column DATA", "LofarStMan", "liblofarstman.so"};
  expect_refused([&] { read_ms_metadata(ms); }, MsError::Kind::kStorageManager, parts);
  expect_refused([&] { count_timesteps(ms); }, MsError::Kind::kStorageManager, parts);
  MsSelection s;
  s.path = ms;
  expect_refused([&] { MsReader reader(s); }, MsError::Kind::kStorageManager, parts);
  // In a subtable: the column and the subtable.
  const std::string field = test::make_ms(dir, "b.ms", "--field-storage-manager NoSuchStMan");
  expect_refused([&] { read_ms_metadata(field); }, MsError::Kind::kStorageManager,
                 {field, "column NAME of its FIELD subtable", "NoSuchStMan", "libnosuchstman.so"});
}

TEST(MsReader, DyscoCompressedDataIsRead) {
  // Debian's casacore (3.5) includes DyscoStMan: a Dysco MS is read, not refused.
  TempDir dir;
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky points --antennas 8 --hours 1 --integration 600 --channels 3 --noise 0.01");
  const test::CommandResult r = test::run_command(
      dir, test::ms_python() + " " + test::source_dir() + "/tests/io/ms_fixture.py edit " + ms + " --dysco --flags");
  if (r.code != 0 && r.err.find("DyscoStMan") != std::string::npos) GTEST_SKIP() << "no Dysco in casacore: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_NE(test::slurp(ms + "/table.dat").find("DyscoStMan"), std::string::npos);  // the edit took
  expect_same(read_visibilities(select_one(ms)), test::expected_vis(dir, ms));
}

TEST(MsMetadata, AMissingSubtableIsNamed) {
  TempDir dir;
  struct Case {
    std::string edit, subtable, says;
  };
  const std::vector<Case> cases = {
      {"--remove-subtable SPECTRAL_WINDOW", "SPECTRAL_WINDOW", "does not exist"},
      {"--remove-subtable ANTENNA", "ANTENNA", "does not exist"},  // not read, but casacore opens it
      {"--remove-subtable-file FIELD", "FIELD", "holds no table.dat"},
      {"--remove-subtable-keyword POLARIZATION", "POLARIZATION", "has no POLARIZATION keyword"},
      {"--remove-subtable-keyword DATA_DESCRIPTION", "DATA_DESCRIPTION", "has no DATA_DESCRIPTION keyword"},
      {"--ephemeris-id", "FIELD", "EPHEM0"},  // the ephemeris table that EPHEMERIS_ID names is absent
  };
  std::string name = "a.ms";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.edit);
    ++name[0];  // b.ms, c.ms, ...
    const std::string ms = test::make_ms(dir, name, c.edit);
    expect_refused([&] { read_ms_metadata(ms); }, MsError::Kind::kMissingSubtable,
                   {ms, c.subtable + " subtable", c.says});
  }
}

TEST(MsSelection, AMovingPhaseCentreIsRefused) {
  // NUM_POLY 1 with a rate: an ephemeris object. WSClean 3.1 images it at the 0th term.
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--moving-centre 1e-6");
  const MsMetadata m = read_ms_metadata(ms);  // reading is fine; selecting the field is not
  EXPECT_FALSE(m.fields[0].direction_problem.empty());
  expect_refused([&] { select_visibilities({m}, {}); }, MsError::Kind::kLayout,
                 {ms, "field 0 (SIM)", "PHASE_DIR", "NUM_POLY 1", "-field"});
  // A zero rate is a fixed centre: imaged at it.
  const std::string still = test::make_ms(dir, "b.ms", "--moving-centre 0");
  const MsSelection s = select_one(still);
  EXPECT_NEAR(s.ra_rad, 53.0 * M_PI / 180, 1e-12);
  EXPECT_NEAR(s.dec_rad, -28.0 * M_PI / 180, 1e-12);
  // Only a selected field is refused: field 1 of the same MS is fixed.
  const std::string two = test::make_ms(dir, "c.ms", "--second-field --moving-centre 1e-6");
  SelectionRequest one;
  one.fields = {1};
  EXPECT_EQ(select_one(two, one).field, 1);
  SelectionRequest all;
  all.all_fields = true;
  expect_refused([&] { select_one(two, all); }, MsError::Kind::kLayout, {two, "field 0 (SIM)", "NUM_POLY"});
}

TEST(MsSelection, SeveralFieldsOfDifferentCentresAreRefused) {
  // WSClean 3.1 grids -field all at field 0's centre with each field's own uvw.
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--second-field");
  for (bool all : {true, false}) {
    SelectionRequest request;
    request.all_fields = all;
    if (!all) request.fields = {0, 1};
    expect_refused([&] { select_one(ms, request); }, MsError::Kind::kLayout,
                   {ms, "fields 0 (SIM) and 1 (OTHER)", "different phase centres (FIELD PHASE_DIR)", "-field"});
  }
}

TEST(MsMetadata, APermanentWriteLockIsRefusedNotWaitedFor) {
  // casacore would wait for the lock for ever; a lock that is not permanent is waited for.
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms"), ready = dir.file("ready");
  ASSERT_EQ(std::system((test::ms_python() + " " + test::source_dir() + "/tests/io/ms_fixture.py hold-lock " + ms +
                         " 60 " + ready + " >/dev/null 2>&1 &").c_str()),
            0);
  for (int i = 0; i < 300 && !std::filesystem::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(std::filesystem::exists(ready)) << "the lock holder did not start";
  const int pid = std::stoi(test::slurp(ready));
  expect_refused([&] { read_ms_metadata(ms); }, MsError::Kind::kLocked,
                 {ms, "locked for writing by process " + std::to_string(pid)});
  ::kill(pid, SIGTERM);
}

TEST(MsMetadata, AnUnreadableMsIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms");
  std::filesystem::permissions(ms + "/table.dat", std::filesystem::perms::none);
  expect_refused([&] { read_ms_metadata(ms); }, MsError::Kind::kUnreadable, {ms, "cannot be read", "table.dat"});
  std::filesystem::permissions(ms + "/table.dat", std::filesystem::perms::owner_all);
}

}  // namespace
}  // namespace gpuclean::io::ms
