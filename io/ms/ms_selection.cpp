#include "io/ms/ms_selection.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "clean/errors.hpp"
#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

using Kind = MsError::Kind;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// The fields asked for (-field ids or all), or the only field with rows; several must share the
// phase centre (WSClean: "all fields should have the same phase centre").
std::vector<int> choose_fields(const MsMetadata& m, const SelectionRequest& request) {
  const std::vector<int> with_rows = m.fields_with_rows();
  std::vector<int> fields;
  if (request.all_fields) {
    fields = with_rows;
  } else if (!request.fields.empty()) {
    for (int f : request.fields) {
      if (f < 0 || static_cast<std::size_t>(f) >= m.fields.size())
        throw MsError(Kind::kSelection, "-field " + std::to_string(f) + ": " + quoted(m.path) + " has " +
                                            std::to_string(m.fields.size()) + " field(s), numbered from 0");
      fields.push_back(f);
    }
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
  } else {
    if (with_rows.size() > 1) {
      std::string list;
      for (int f : with_rows) list += (list.empty() ? "" : ", ") + std::to_string(f) + " (" + m.fields[f].name + ")";
      throw MsError(Kind::kLayout, quoted(m.path) + " has rows of several fields: " + list + "; choose with -field");
    }
    fields = with_rows;
  }
  if (fields.empty()) throw MsError(Kind::kEmpty, quoted(m.path) + " has no cross-correlation rows");
  for (int f : fields) {
    const MsField& field = m.fields[f];
    if (!field.direction_problem.empty())
      throw MsError(Kind::kLayout, quoted(m.path) + " field " + std::to_string(f) + " (" + field.name +
                                       "): " + field.direction_problem);
    const MsField& first = m.fields[fields.front()];
    if (std::abs(field.ra_rad - first.ra_rad) > 1e-9 || std::abs(field.dec_rad - first.dec_rad) > 1e-9)
      throw MsError(Kind::kLayout, quoted(m.path) + " fields " + std::to_string(fields.front()) + " (" + first.name +
                                       ") and " + std::to_string(f) + " (" + field.name +
                                       ") have different phase centres (FIELD PHASE_DIR): image one field at a time "
                                       "with -field (WSClean 3.1 grids them all at the first field's centre, which "
                                       "misplaces the others)");
  }
  return fields;
}

// The data description of the selected fields' rows, within -spws when given: one.
int choose_data_description(const MsMetadata& m, const std::vector<int>& fields, const std::set<std::size_t>& spws) {
  std::set<int> dds, all;
  for (const auto& [key, n] : m.cross_rows) {
    if (n == 0 || !std::binary_search(fields.begin(), fields.end(), key.first)) continue;
    all.insert(key.second);
    const int spw = m.data_descriptions[key.second].spectral_window;
    if (spws.empty() || spws.count(static_cast<std::size_t>(spw))) dds.insert(key.second);
  }
  if (all.empty())
    throw MsError(Kind::kEmpty, quoted(m.path) + " has no cross-correlation rows of field " +
                                    std::to_string(fields.front()));
  if (dds.empty()) {
    std::string list;
    for (int dd : all) list += (list.empty() ? "" : ", ") + std::to_string(m.data_descriptions[dd].spectral_window);
    throw MsError(Kind::kSelection, "-spws: " + quoted(m.path) + " has rows of spectral window(s) " + list +
                                        " only in the selected field(s)");
  }
  if (dds.size() > 1) {
    std::string list;
    for (int dd : dds) list += (list.empty() ? "" : ", ") + std::to_string(m.data_descriptions[dd].spectral_window);
    throw MsError(Kind::kLayout, quoted(m.path) + " has rows of several spectral windows (" + list +
                                     ") in the selected field(s): imaging them together is not supported yet; "
                                     "choose one with -spws");
  }
  return *dds.begin();
}

// Whether the channel frequencies decrease; they must increase or decrease strictly, as WSClean
// 3.1 requires (W31:main/wsclean.cpp makeImagingTable: "the channels do neither only increase nor
// only decrease in frequency", "two adjacent channels had the same frequency").
bool check_channels(const MsMetadata& m, const std::vector<double>& freq) {
  const bool decreasing = freq.size() >= 2 && freq[1] < freq[0];
  for (std::size_t c = 1; c < freq.size(); ++c)
    if (!(decreasing ? freq[c] < freq[c - 1] : freq[c] > freq[c - 1]))
      throw MsError(Kind::kLayout, "the channel frequencies of " + quoted(m.path) +
                                       " neither increase nor decrease strictly (channel " + std::to_string(c) +
                                       " after " + std::to_string(c - 1) +
                                       "): not a frequency axis gpuclean (or WSClean) can image");
  return decreasing;
}

}  // namespace

std::vector<MsSelection> select_visibilities(const std::vector<MsMetadata>& sets, const SelectionRequest& request) {
  if (sets.empty()) throw clean::InvalidSettings("no MeasurementSet given");
  if (request.channel_begin && request.channel_end && *request.channel_begin >= *request.channel_end)
    throw clean::InvalidSettings("-channel-range " + std::to_string(*request.channel_begin) + " " +
                                 std::to_string(*request.channel_end) + " is empty (the end is exclusive)");
  const std::string column = request.data_column.empty() ? default_data_column(sets.front()) : request.data_column;

  std::vector<MsSelection> out;
  for (const MsMetadata& m : sets) {
    MsSelection s;
    s.path = m.path;
    s.data_column = column;
    if (!m.has_column(column))
      throw MsError(Kind::kMissingColumn, quoted(m.path) + " has no " + column + " column");
    for (const char* needed : {"UVW", "FLAG", "WEIGHT", "ANTENNA1", "ANTENNA2", "FIELD_ID", "DATA_DESC_ID"})
      if (!m.has_column(needed))
        throw MsError(Kind::kMissingColumn, quoted(m.path) + " has no " + std::string(needed) + " column");

    s.fields = choose_fields(m, request);
    s.field = s.fields.front();
    const MsField& field = m.fields[s.field];
    s.field_name = field.name;
    s.ra_rad = field.ra_rad;
    s.dec_rad = field.dec_rad;
    s.data_description = choose_data_description(m, s.fields, request.spws);
    s.rows = 0;
    for (int f : s.fields) {
      const auto it = m.cross_rows.find({f, s.data_description});
      if (it != m.cross_rows.end()) s.rows += it->second;
    }
    s.min_uvw_m = request.min_uvw_m, s.max_uvw_m = request.max_uvw_m;
    s.timesteps = request.interval;
    s.timestep_parity = request.timestep_parity;
    s.subtract_model = request.subtract_model;
    s.model_column = request.model_column;
    if (s.model_column == column || s.model_column == "DATA")
      throw clean::InvalidSettings("-model-column " + s.model_column + " would overwrite the data " +
                                   (s.model_column == column ? "being imaged" : "column") +
                                   "; give another column (MODEL_DATA is the default)");
    if (s.subtract_model && !m.has_column(s.model_column))
      throw MsError(Kind::kMissingColumn, "-subtract-model: " + quoted(m.path) + " has no " + s.model_column + " column");

    const MsDataDescription& dd = m.data_descriptions[s.data_description];
    const MsSpectralWindow& spw = m.spectral_windows[dd.spectral_window];
    const std::vector<int>& corr = m.polarizations[dd.polarization];
    s.reversed = check_channels(m, spw.freq_hz);
    const std::size_t nchan = spw.freq_hz.size();
    // -channel-range counts channels in increasing frequency (WSClean 3.1 takes it from its
    // frequency-sorted list of the channels); a decreasing MS has them from its last channel.
    const std::size_t begin = request.channel_begin.value_or(0), end = request.channel_end.value_or(nchan);
    if (end > nchan)
      throw MsError(Kind::kSelection, "-channel-range ends at " + std::to_string(end) + " but " + quoted(m.path) +
                                          " has " + std::to_string(nchan) + " channel(s)");
    if (begin >= end)
      throw MsError(Kind::kSelection, "-channel-range starts at " + std::to_string(begin) + " but " +
                                          quoted(m.path) + " has " + std::to_string(nchan) + " channel(s)");
    s.channel_begin = s.reversed ? nchan - end : begin;
    s.channel_end = s.reversed ? nchan - begin : end;
    s.freq_hz.assign(spw.freq_hz.begin() + s.channel_begin, spw.freq_hz.begin() + s.channel_end);
    s.width_hz.assign(spw.width_hz.begin() + s.channel_begin, spw.width_hz.begin() + s.channel_end);
    if (s.reversed) {
      std::reverse(s.freq_hz.begin(), s.freq_hz.end());
      std::reverse(s.width_hz.begin(), s.width_hz.end());
    }
    s.ncorr = corr.size();
    std::string why;
    s.pol = request.pol;
    if (!stokes_rule(corr, request.pol, s.rule, why))
      throw MsError(Kind::kLayout, "-pol " + pol_name(request.pol) + ": " + quoted(m.path) + " cannot give it (" + why + ")");
    s.weight_spectrum = m.weight_spectrum_defined;

    // Several MSs must image the same field: WSClean does not check, and a mismatch smears.
    if (!out.empty()) {
      const MsSelection& first = out.front();
      if (std::abs(s.ra_rad - first.ra_rad) > 1e-9 || std::abs(s.dec_rad - first.dec_rad) > 1e-9)
        throw MsError(Kind::kLayout, "the phase centre of " + quoted(m.path) + " differs from that of " +
                                         quoted(first.path) + ": image MSs of one field together");
      if (s.freq_hz != first.freq_hz)
        throw MsError(Kind::kLayout, quoted(m.path) + " has other channels than " + quoted(first.path) +
                                         ": MSs with different channels are not supported yet");
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpuclean::io::ms
