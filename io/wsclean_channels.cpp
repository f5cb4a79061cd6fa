#include "io/wsclean_channels.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <system_error>

#include "io/fits_error.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;
namespace {

constexpr auto kInput = FitsError::Kind::kInput;

// WSClean's polarisation parts, in the order of FITS STOKES codes (1..4, -1..-8).
const std::vector<std::string>& known_pols() {
  static const std::vector<std::string> pols = {"I", "Q", "U", "V", "RR", "LL", "RL", "LR", "XX", "YY", "XY", "YX"};
  return pols;
}

std::size_t pol_rank(const std::string& pol) {
  const auto& pols = known_pols();
  return static_cast<std::size_t>(std::find(pols.begin(), pols.end(), pol) - pols.begin());
}

// NAME-(NNNN|MFS)[-POL]-(KIND).fits
const std::regex& member_pattern() {
  static const std::regex re("^(.+)-([0-9]{4,}|MFS)(?:-(I|Q|U|V|RR|LL|RL|LR|XX|YY|XY|YX))?-(dirty|psf)\\.fits$");
  return re;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string join(const fs::path& dir, const std::string& file) { return (dir / file).string(); }

}  // namespace

std::string wsclean_name(const std::string& prefix, int channel, const std::string& pol, const std::string& kind) {
  char number[16];
  std::snprintf(number, sizeof number, "%04d", channel);
  return prefix + "-" + (channel < 0 ? std::string("MFS") : std::string(number)) + (pol.empty() ? "" : "-" + pol) +
         "-" + kind + ".fits";
}

WscleanChannelSet find_wsclean_channels(const std::string& given) {
  std::string prefix = given;
  std::smatch m;
  const std::string given_name = fs::path(given).filename().string();
  if (std::regex_match(given_name, m, member_pattern()))
    prefix = join(fs::path(given).parent_path(), m[1].str());
  const fs::path dir = fs::path(prefix).parent_path().empty() ? fs::path(".") : fs::path(prefix).parent_path();
  const std::string base = fs::path(prefix).filename().string();
  const std::string example = wsclean_name(prefix, 0, "", "dirty");
  std::error_code ec;
  if (base.empty() || !fs::is_directory(dir, ec))
    throw FitsError(kInput, "no WSClean channel images '" + example + "': give the -name WSClean was run with "
                                                                    "(the folder must exist).");

  // Channel numbers per polarisation part ("" for none).
  std::map<std::string, std::set<long>> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string f = entry.path().filename().string();
    if (!std::regex_match(f, m, member_pattern()) || m[1].str() != base || m[4].str() != "dirty" ||
        m[2].str() == "MFS")
      continue;
    found[m[3].str()].insert(std::stol(m[2].str()));
  }
  if (found.empty())
    throw FitsError(kInput, "no WSClean channel images '" + example + "' (or '" +
                                wsclean_name(prefix, 0, "I", "dirty") +
                                "'): give the -name WSClean was run with -channels-out.");
  if (found.count("") && found.size() > 1)
    throw FitsError(kInput, "'" + prefix + "' has channel images both with and without a polarisation part ('" +
                                example + "' and '" + wsclean_name(prefix, 0, found.rbegin()->first, "dirty") +
                                "'); move one of the two sets to another folder.");

  WscleanChannelSet set;
  set.prefix = prefix;
  long last = 0;
  for (const auto& [pol, numbers] : found) last = std::max(last, *numbers.rbegin());
  set.channels = static_cast<std::size_t>(last) + 1;
  for (const auto& [pol, numbers] : found)
    if (!pol.empty()) set.polarizations.push_back(pol);
  std::sort(set.polarizations.begin(), set.polarizations.end(),
            [](const std::string& a, const std::string& b) { return pol_rank(a) < pol_rank(b); });
  const std::vector<std::string> parts = set.polarizations.empty() ? std::vector<std::string>{""} : set.polarizations;
  for (const std::string& pol : parts) {
    std::vector<std::string> row;
    for (std::size_t c = 0; c < set.channels; ++c) {
      const std::string path = wsclean_name(prefix, static_cast<int>(c), pol, "dirty");
      if (!exists(path))
        throw FitsError(kInput, "channel " + std::to_string(c) + " of the WSClean set '" + prefix + "' is missing: no '" +
                                    path + "' (the set has channels up to " + std::to_string(last) + ").");
      row.push_back(path);
    }
    set.dirty.push_back(std::move(row));
  }
  for (std::size_t c = 0; c < set.channels; ++c) {
    std::string path = wsclean_name(prefix, static_cast<int>(c), "", "psf");
    if (!exists(path) && !set.polarizations.empty()) {
      const std::string with_pol = wsclean_name(prefix, static_cast<int>(c), set.polarizations.front(), "psf");
      if (exists(with_pol)) path = with_pol;
    }
    if (!exists(path))
      throw FitsError(kInput, "no PSF '" + path + "' for channel " + std::to_string(c) + " of the WSClean set '" +
                                  prefix + "'; WSClean writes it with -make-psf.");
    set.psf.push_back(path);
  }
  for (const std::string& candidate : {wsclean_name(prefix, -1, parts.front(), "dirty"), wsclean_name(prefix, -1, "", "dirty")})
    if (set.mfs_dirty_first_pol.empty() && exists(candidate)) set.mfs_dirty_first_pol = candidate;
  if (exists(wsclean_name(prefix, -1, "", "psf"))) set.mfs_psf = wsclean_name(prefix, -1, "", "psf");
  return set;
}

std::vector<WscleanChannelSet> find_wsclean_sets(const std::string& folder) {
  std::set<std::string> bases;
  std::error_code ec;
  std::smatch m;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string f = entry.path().filename().string();
    if (std::regex_match(f, m, member_pattern()) && m[4].str() == "dirty" && m[2].str() != "MFS" &&
        std::stol(m[2].str()) == 0)
      bases.insert(m[1].str());
  }
  std::vector<WscleanChannelSet> sets;
  for (const std::string& base : bases) {
    const std::string prefix = join(fs::path(folder), base);
    try {
      sets.push_back(find_wsclean_channels(prefix));
    } catch (const FitsError&) {
      WscleanChannelSet broken;
      broken.prefix = prefix;
      sets.push_back(std::move(broken));
    }
  }
  return sets;
}

bool is_wsclean_set_member(const std::string& path) {
  std::smatch m;
  const std::string f = fs::path(path).filename().string();
  if (!std::regex_match(f, m, member_pattern())) return false;
  const std::string prefix = join(fs::path(path).parent_path(), m[1].str());
  if (exists(wsclean_name(prefix, 0, "", "dirty"))) return true;
  for (const std::string& pol : known_pols())
    if (exists(wsclean_name(prefix, 0, pol, "dirty"))) return true;
  return false;
}

}  // namespace gpuclean::io
