#include "io/ms/ms_selection.hpp"

#include <cmath>
#include <set>

#include "clean/errors.hpp"
#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

using Kind = MsError::Kind;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

int choose_field(const MsMetadata& m, const SelectionRequest& request) {
  const std::vector<int> with_rows = m.fields_with_rows();
  if (request.field) {
    const int f = *request.field;
    if (f < 0 || static_cast<std::size_t>(f) >= m.fields.size())
      throw MsError(Kind::kSelection, "-field " + std::to_string(f) + ": " + quoted(m.path) + " has " +
                                          std::to_string(m.fields.size()) + " field(s), numbered from 0");
    return f;
  }
  if (with_rows.size() > 1) {
    std::string list;
    for (int f : with_rows) list += (list.empty() ? "" : ", ") + std::to_string(f) + " (" + m.fields[f].name + ")";
    throw MsError(Kind::kLayout, quoted(m.path) + " has rows of several fields: " + list + "; choose one with -field");
  }
  if (with_rows.empty()) throw MsError(Kind::kEmpty, quoted(m.path) + " has no cross-correlation rows");
  return with_rows.front();
}

int choose_data_description(const MsMetadata& m, int field) {
  std::set<int> dds;
  for (const auto& [key, n] : m.cross_rows)
    if (key.first == field && n > 0) dds.insert(key.second);
  if (dds.empty())
    throw MsError(Kind::kEmpty, quoted(m.path) + " has no cross-correlation rows of field " + std::to_string(field));
  if (dds.size() > 1)
    throw MsError(Kind::kLayout, quoted(m.path) + " has rows of several spectral windows (data descriptions) in field " +
                                     std::to_string(field) + ": not supported yet");
  return *dds.begin();
}

void check_channels(const MsMetadata& m, const std::vector<double>& freq) {
  for (std::size_t c = 1; c < freq.size(); ++c)
    if (!(freq[c] > freq[c - 1]))
      throw MsError(Kind::kLayout, "the channel frequencies of " + quoted(m.path) +
                                       " do not increase strictly (channel " + std::to_string(c) + "): not supported");
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

    s.field = choose_field(m, request);
    const MsField& field = m.fields[s.field];
    s.field_name = field.name;
    if (!field.direction_problem.empty())
      throw MsError(Kind::kLayout, quoted(m.path) + " field " + std::to_string(s.field) + ": " + field.direction_problem);
    s.ra_rad = field.ra_rad;
    s.dec_rad = field.dec_rad;
    s.data_description = choose_data_description(m, s.field);
    s.rows = m.cross_rows.at({s.field, s.data_description});

    const MsDataDescription& dd = m.data_descriptions[s.data_description];
    const MsSpectralWindow& spw = m.spectral_windows[dd.spectral_window];
    const std::vector<int>& corr = m.polarizations[dd.polarization];
    check_channels(m, spw.freq_hz);
    const std::size_t nchan = spw.freq_hz.size();
    s.channel_begin = request.channel_begin.value_or(0);
    s.channel_end = request.channel_end.value_or(nchan);
    if (s.channel_end > nchan)
      throw MsError(Kind::kSelection, "-channel-range ends at " + std::to_string(s.channel_end) + " but " +
                                          quoted(m.path) + " has " + std::to_string(nchan) + " channel(s)");
    if (s.channel_begin >= s.channel_end)
      throw MsError(Kind::kSelection, "-channel-range starts at " + std::to_string(s.channel_begin) + " but " +
                                          quoted(m.path) + " has " + std::to_string(nchan) + " channel(s)");
    s.freq_hz.assign(spw.freq_hz.begin() + s.channel_begin, spw.freq_hz.begin() + s.channel_end);
    s.width_hz.assign(spw.width_hz.begin() + s.channel_begin, spw.width_hz.begin() + s.channel_end);
    s.ncorr = corr.size();
    std::string why;
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
