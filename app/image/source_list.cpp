#include "app/image/source_list.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <tuple>

#include "clean/errors.hpp"
#include "clean/source_list.hpp"
#include "clean/spectral_fit.hpp"

namespace gpuclean::app {
namespace {

/// A number as WSClean's stream writes it (precision 15, default float format).
std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

/// h:m:s (or d.m.s) of `parts` thousandths of a second, as aocommon writes them: two digits
/// each, then the thousandths with trailing zeros dropped (`keep_one`: at least one decimal).
std::string sexagesimal(long long parts, char separator, bool keep_one) {
  const long long whole = parts / 1000, thousandths = parts % 1000;
  char text[48];
  int n = std::snprintf(text, sizeof text, "%02lld%c%02lld%c%02lld", whole / 3600, separator, whole / 60 % 60,
                        separator, whole % 60);
  if (thousandths != 0 || keep_one) {
    n += std::snprintf(text + n, sizeof text - n, ".%03lld", thousandths);
    while (text[n - 1] == '0' && text[n - 2] != '.') text[--n] = '\0';
  }
  return text;
}

/// (l, m) of pixel (x, y) and their RA, Dec (SIN, as WSClean's ImageCoordinates XYToLM, LMToRaDec).
void pixel_radec(const SourceListSky& sky, std::size_t x, std::size_t y, long double* ra, long double* dec) {
  const long double l = (static_cast<long double>(sky.width) / 2 - x) * sky.scale_rad;
  const long double m = (static_cast<long double>(y) - static_cast<long double>(sky.height) / 2) * sky.scale_rad;
  const long double n = std::sqrt(1 - l * l - m * m), c = std::cos(static_cast<long double>(sky.dec_rad)),
                    s = std::sin(static_cast<long double>(sky.dec_rad));
  *ra = sky.ra_rad + std::atan2(l, n * c - m * s);
  *dec = std::asin(m * c + n * s);
}

struct Line {
  std::size_t scale, x, y;
  std::vector<float> terms;  // WSClean keeps its terms in float
  double fwhm_arcsec;        // 0: a point
};

std::string format(const std::vector<Line>& lines, const SourceListSky& sky, double reference_hz, bool logarithmic) {
  std::ostringstream out;
  out << "Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI, ReferenceFrequency='" << number(reference_hz)
      << "', MajorAxis, MinorAxis, Orientation\n";
  std::vector<std::size_t> index;
  for (const Line& s : lines) {
    if (index.size() <= s.scale) index.resize(s.scale + 1, 0);
    long double ra = 0, dec = 0;
    pixel_radec(sky, s.x, s.y, &ra, &dec);
    out << 's' << s.scale << 'c' << index[s.scale]++ << (s.fwhm_arcsec > 0 ? ",GAUSSIAN," : ",POINT,")
        << wsclean_ra_text(ra) << ',' << wsclean_dec_text(dec) << ',' << number(s.terms.front()) << ",[";
    for (std::size_t k = 1; k < s.terms.size(); ++k) out << (k > 1 ? "," : "") << number(s.terms[k]);
    out << "]," << (logarithmic ? "true" : "false") << ',' << number(reference_hz);
    if (s.fwhm_arcsec > 0)
      out << ',' << number(s.fwhm_arcsec) << ',' << number(s.fwhm_arcsec) << ",0\n";
    else
      out << ",,,\n";
  }
  return out.str();
}

}  // namespace

double wsclean_reference_frequency(const std::vector<SourceListChannel>& channels) {
  // Each deconvolution channel (here an output channel) has the frequency f·w / float(w), its
  // weight summed into a float; the fitter then takes their mean weighted by those floats.
  double sum = 0, weights = 0, plain = 0;
  for (const SourceListChannel& c : channels) {
    const float w = static_cast<float>(c.weight);
    const double f = w > 0 ? c.frequency_hz * c.weight / w : c.frequency_hz;
    sum += f * w, weights += w, plain += f;
  }
  return weights > 0 ? sum / weights : plain / static_cast<double>(channels.size());
}

std::string wsclean_ra_text(long double ra_rad) {
  long double hours = std::fmod(ra_rad * (12.0L / M_PIl), 24.0L);
  std::string sign;
  if (hours < 0) sign = "-", hours = -hours;
  return sign + sexagesimal(std::llround(hours * 3600.0L * 1000.0L), ':', true);
}

std::string wsclean_dec_text(long double dec_rad) {
  long double degrees = dec_rad * (180.0L / M_PIl);
  std::string sign;
  if (degrees < 0) sign = "-", degrees = -degrees;
  return sign + sexagesimal(std::llround(degrees * 3600.0L * 1000.0L), '.', false);
}

void check_source_list(const clean::CleanSettings& settings, std::size_t channels, bool stokes_i) {
  if (!stokes_i) throw clean::InvalidSettings("-save-source-list works for Stokes I only (-pol i), as in WSClean 3.1");
  if (channels > 1 && settings.spectral_fit().terms == 0)
    throw clean::InvalidSettings(
        "-save-source-list with -channels-out > 1 -join-channels needs a spectral fit: add -fit-spectral-pol or "
        "-fit-spectral-log-pol (WSClean 3.1 refuses the list without one)");
}

std::string wsclean_source_list(const std::vector<SourceListChannel>& channels, const SourceListSky& sky,
                                const clean::CleanSettings& settings, const clean::CleanResult* components,
                                const SourceListPlanes* cleaned) {
  const clean::SpectralFitSettings fit = settings.spectral_fit();
  check_source_list(settings, channels.size(), true);
  const double reference_hz = wsclean_reference_frequency(channels);
  std::vector<double> frequencies, weights;
  for (const SourceListChannel& c : channels)
    if (c.weight > 0) frequencies.push_back(c.frequency_hz), weights.push_back(static_cast<float>(c.weight));
  std::optional<clean::SpectralFit> fitter;
  if (channels.size() > 1) fitter.emplace(frequencies, weights, fit.terms, reference_hz, fit.logarithmic);
  const auto terms_of = [&](const std::vector<float>& spectrum) {
    if (!fitter) return std::vector<float>{spectrum.front()};
    std::vector<double> t(fit.terms);
    fitter->fit_terms(spectrum.data(), t.data());
    return std::vector<float>(t.begin(), t.end());
  };

  std::vector<Line> lines;
  if (settings.multiscale.enabled && components) {
    // One source per pixel and scale: its spectrum over the cleaned planes, fitted as above (over
    // the deconvolution channels when those were cleaned).
    if (cleaned) {
      frequencies = cleaned->frequencies_hz;
      weights.assign(cleaned->weights.begin(), cleaned->weights.end());
      for (double& w : weights) w = static_cast<float>(w);
      fitter.reset();
      if (frequencies.size() > 1) fitter.emplace(frequencies, weights, fit.terms, reference_hz, fit.logarithmic);
    }
    const double pixel_arcsec = sky.scale_rad * (180.0 * 3600.0 / M_PI);
    const std::size_t planes = frequencies.size();
    for (const clean::ModelSource& s : clean::model_sources(*components)) {
      std::vector<float> spectrum(planes, 0.0f);
      for (std::size_t j = 0; j < planes; ++j)
        spectrum[j] = static_cast<float>(clean::source_flux(*components, s, j, planes));
      const std::vector<clean::ScaleSummary>& scales = components->components.scales;
      const double size = s.scale < scales.size() ? scales[s.scale].size : 0;
      lines.push_back({s.scale, s.x, s.y, terms_of(spectrum), clean::scale_fwhm_pixels(size) * pixel_arcsec});
    }
    std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
      return std::tie(a.scale, a.y, a.x) < std::tie(b.scale, b.y, b.x);
    });
  } else {
    // Every pixel non-zero in some channel, in raster order, with its values over the channels.
    std::vector<float> spectrum;
    for (std::size_t y = 0; y < sky.height; ++y)
      for (std::size_t x = 0; x < sky.width; ++x) {
        const std::size_t i = y * sky.width + x;
        spectrum.clear();
        bool nonzero = false;
        for (const SourceListChannel& c : channels) {
          if (!(c.weight > 0) && channels.size() > 1) continue;
          spectrum.push_back(static_cast<float>((*c.model)[i]));
          nonzero = nonzero || spectrum.back() != 0.0f;
        }
        if (nonzero) lines.push_back({0, x, y, terms_of(spectrum), 0.0});
      }
  }
  return format(lines, sky, reference_hz, fit.logarithmic);
}

}  // namespace gpuclean::app
