// gpuclean.wsclean's core: a CLEAN session that lives across WSClean's major cycles
// (clean/outer_loop.hpp). WSClean's float64 arrays are cleaned in float32, as every gpuclean
// path is; only the residual crosses into the session each round.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "app/outer/outer_loop_run.hpp"
#include "app/outer/wsclean_options.hpp"
#include "app/outer/wsclean_round.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/spectral_fit.hpp"
#include "python/src/bindings.hpp"

namespace gpuclean::python {
namespace {

/// The planes of a [channels, polarizations, height, width] array, channel-major.
std::vector<const float*> planes_of(const FloatArray& a) {
  std::vector<const float*> planes;
  const py::ssize_t n = a.shape(2) * a.shape(3);
  for (py::ssize_t i = 0; i < a.shape(0) * a.shape(1); ++i) planes.push_back(a.data() + i * n);
  return planes;
}

/// WSClean's meta of one call: its numbers, read by name (WSClean's own object or a stand-in).
app::WscleanMeta meta_of(const py::handle& meta) {
  app::WscleanMeta m;
  m.iteration_number = py::int_(meta.attr("iteration_number")).cast<std::int64_t>();
  m.max_iterations = py::int_(meta.attr("max_iterations")).cast<std::int64_t>();
  m.mgain = py::float_(meta.attr("mgain")).cast<double>();
  m.major_iter_threshold = py::float_(meta.attr("major_iter_threshold")).cast<double>();
  m.final_threshold = py::float_(meta.attr("final_threshold")).cast<double>();
  return m;
}

py::dict to_dict(const clean::OuterLoopRound& r) {
  py::dict d;
  d["components"] = r.components;
  d["major_cycles"] = r.major_cycles;
  d["peak"] = r.peak;
  d["peak_left"] = r.peak_left;
  d["threshold"] = r.threshold;
  d["noise_sigma"] = r.noise_sigma;
  d["stop_reason"] = std::string(clean::to_string(r.reason));
  d["round_floor"] = r.round_floor;
  d["auto_mask_started"] = r.auto_mask_started;
  return d;
}

class Session {
 public:
  explicit Session(const std::vector<std::string>& args)
      : options_(app::parse_outer_loop_options(args)), log_(options_.verbosity, false) {}
  /// The WSClean hook's session: its settings and the rules of its rounds (app/outer/).
  explicit Session(const app::WscleanSessionSettings& s)
      : options_(s.options), log_(options_.verbosity, false), rules_{s.niter, s.wsclean_auto_mask} {}

  /// residual [channels, polarizations, height, width]; psf [channels, height, width].
  void start(const FloatArray& residual, const FloatArray& psf, const std::vector<double>& frequencies,
             const std::vector<double>& weights, double polarization_factor) {
    if (residual.ndim() != 4) throw py::value_error("the residual must be [channels, polarizations, height, width]");
    if (psf.ndim() != 3) throw py::value_error("the PSF must be [channels, height, width]");
    clean::OuterLoopInput in;
    in.channels = static_cast<std::size_t>(residual.shape(0));
    in.polarizations = static_cast<std::size_t>(residual.shape(1));
    in.height = static_cast<std::size_t>(residual.shape(2));
    in.width = static_cast<std::size_t>(residual.shape(3));
    if (static_cast<std::size_t>(psf.shape(0)) != in.channels)
      throw py::value_error("give one PSF per channel");
    const py::ssize_t n = psf.shape(1) * psf.shape(2);
    for (py::ssize_t c = 0; c < psf.shape(0); ++c) {
      in.psfs.emplace_back(static_cast<std::size_t>(psf.shape(2)), static_cast<std::size_t>(psf.shape(1)));
      std::copy(psf.data() + c * n, psf.data() + (c + 1) * n, in.psfs.back().pixels.begin());
    }
    in.frequencies_hz = frequencies;
    in.weights = weights;
    in.polarization_factor = polarization_factor;
    shape_ = {residual.shape(0), residual.shape(1), residual.shape(2), residual.shape(3)};
    const std::vector<const float*> first = planes_of(residual);
    py::gil_scoped_release release;
    clean::wait_for_gpu_warm_up();
    session_ = app::start_outer_loop(options_, std::move(in), first, log_);
  }

  void set_residual(const FloatArray& residual) {
    check_shape(residual);
    const std::vector<const float*> planes = planes_of(residual);
    py::gil_scoped_release release;
    session().set_residuals(planes);
  }

  float peak() {
    py::gil_scoped_release release;
    return session().peak();
  }

  py::dict clean(double floor, double round_gain, std::size_t budget) {
    clean::OuterLoopRound r;
    {
      py::gil_scoped_release release;
      r = session().clean(floor, round_gain, budget, cycle_log());
    }
    return to_dict(r);
  }

  /// One WSClean call's round (app::next_round), or with `budget` -parallel-deconvolution's
  /// (app::next_sub_image_round): the round's dict plus "budget" and "more" (WSClean's "continue").
  py::dict wsclean_round(const py::object& meta, std::optional<std::size_t> budget) {
    const app::WscleanMeta m = meta_of(meta);
    app::WscleanRound r;
    {
      py::gil_scoped_release release;
      r = budget ? app::next_sub_image_round(session(), m, *budget, rules_, cycle_log())
                 : app::next_round(session(), m, rules_, cycle_log());
    }
    py::dict d = to_dict(r.round);
    d["budget"] = r.budget;
    d["more"] = r.more;
    return d;
  }

  py::array_t<float> models() { return stack(session().models()); }

  /// Adds what the model gained since the last call to `model` (WSClean's float64 model, in
  /// place): one pass, without handing the float32 model to Python.
  void add_model_change(py::array_t<double, 0> model) {  // no forcecast: a copy would lose the update
    check_shape(model);
    if (!(model.flags() & py::array::c_style) || !model.writeable())
      throw py::value_error("the model must be a writeable C-ordered float64 array");
    double* out = model.mutable_data();
    py::gil_scoped_release release;
    const std::vector<clean::HostImage> now = session().models();
    if (last_models_.empty())
      for (const clean::HostImage& p : now) last_models_.emplace_back(p.size(), 0.0f);
    std::size_t at = 0;
    for (std::size_t p = 0; p < now.size(); ++p) {
      const std::vector<float>& v = now[p].pixels;
      std::vector<float>& last = last_models_[p];
      for (std::size_t i = 0; i < v.size(); ++i, ++at) {
        if (v[i] == last[i]) continue;
        out[at] += static_cast<double>(v[i]) - static_cast<double>(last[i]);
        last[i] = v[i];
      }
    }
  }
  py::array_t<float> residuals() { return stack(session().residuals()); }
  std::size_t iterations() { return session().result().stop.iterations; }
  std::string device() const {
    return std::string(clean::to_string(session_ ? session_->device() : options_.settings.device));
  }
  const clean::CleanSettings& settings() const { return options_.settings; }

 private:
  clean::OuterLoopSession& session() {
    if (!session_) throw py::value_error("start the session first");
    return *session_;
  }
  clean::CycleCallback cycle_log() {
    return [this](const clean::CycleReport& c) {
      log_.verbose("gpuclean: cycle %4zu  components %8zu  peak %11.4e Jy  model flux %11.4e Jy  threshold %10.3e",
                   c.cycle, c.iterations, c.peak, c.model_flux, c.threshold);
    };
  }
  template <typename Array>
  void check_shape(const Array& a) const {
    if (a.ndim() != 4 || a.shape(0) != shape_[0] || a.shape(1) != shape_[1] || a.shape(2) != shape_[2] ||
        a.shape(3) != shape_[3])
      throw py::value_error("the residual's shape changed between major cycles");
  }
  py::array_t<float> stack(std::vector<clean::HostImage> planes) const {
    std::vector<float> all;
    all.reserve(planes.size() * planes.front().size());
    for (const clean::HostImage& p : planes) all.insert(all.end(), p.pixels.begin(), p.pixels.end());
    return adopt(std::move(all), std::vector<py::ssize_t>(shape_.begin(), shape_.end()));
  }

  app::OuterLoopOptions options_;
  app::Log log_;
  app::WscleanRoundRules rules_;
  std::vector<py::ssize_t> shape_;
  std::unique_ptr<clean::OuterLoopSession> session_;
  std::vector<std::vector<float>> last_models_;  ///< the models as add_model_change last saw them
};

}  // namespace

void bind_outer_loop(py::module_& m) {
  // gpuclean's own spectral fit of one spectrum, to check it against WSClean's fitter.
  m.def("fit_spectrum", [](const FloatArray& values, std::vector<double> frequencies, const std::vector<double>& weights,
                           std::size_t terms, bool logarithmic) {
    const double middle = 0.5 * (frequencies.front() + frequencies.back());
    const clean::SpectralFit fit(std::move(frequencies), weights, terms, middle, logarithmic);
    if (static_cast<std::size_t>(values.size()) != fit.channels()) throw py::value_error("one value per channel");
    std::vector<float> fitted(fit.channels());
    fit.fit(values.data(), fitted.data());
    return adopt(std::move(fitted), {static_cast<py::ssize_t>(fit.channels())});
  }, py::arg("values"), py::arg("frequencies"), py::arg("weights"), py::arg("terms"), py::arg("logarithmic"));
  m.def("start_gpu_warm_up", [] { clean::start_gpu_warm_up(); });
  // The WSClean hook's settings: GPUCLEAN_OPTIONS' text, WSClean's command line and what its
  // meta and arrays give (app/outer/wsclean_options.hpp). Without meta: the check before WSClean's
  // first call. theoretical_beam() returns (pixels, None) or (None, why not).
  py::class_<app::WscleanSessionSettings>(m, "WscleanSettings")
      .def_readonly("args", &app::WscleanSessionSettings::args)
      .def_readonly("notes", &app::WscleanSessionSettings::notes)
      .def_readonly("niter", &app::WscleanSessionSettings::niter)
      .def_readonly("fit_given", &app::WscleanSessionSettings::fit_given)
      .def_readonly("wsclean_auto_mask", &app::WscleanSessionSettings::wsclean_auto_mask);
  m.def("wsclean_settings",
        [](const std::string& gpuclean_options, const std::vector<std::string>& wsclean_args, std::size_t channels,
           std::size_t polarizations, const py::object& meta, std::optional<std::pair<int, int>> version,
           const std::vector<std::string>& ignored, const py::object& theoretical_beam) {
          app::WscleanSessionRequest request;
          request.gpuclean_options = gpuclean_options;
          request.wsclean_args = wsclean_args;
          request.channels = channels;
          request.polarizations = polarizations;
          if (!meta.is_none()) request.gain = py::float_(meta.attr("gain")).cast<double>();
          request.version = version;
          request.ignored = ignored;
          if (!theoretical_beam.is_none())
            request.theoretical_beam = [theoretical_beam]() -> std::pair<std::optional<double>, std::string> {
              const py::tuple t = theoretical_beam();
              return {t[0].is_none() ? std::nullopt : std::optional<double>(t[0].cast<double>()),
                      t[1].is_none() ? std::string() : py::str(t[1]).cast<std::string>()};
            };
          return app::wsclean_session_settings(request);
        },
        py::arg("gpuclean_options"), py::arg("wsclean_args"), py::arg("channels") = 1, py::arg("polarizations") = 1,
        py::arg("meta") = py::none(), py::arg("version") = py::none(), py::arg("ignored") = std::vector<std::string>{},
        py::arg("theoretical_beam") = py::none());
  // gpuclean's options for WSClean's command line (the option table's WSClean names), less those
  // `gpuclean_args` gives.
  m.def("wsclean_carried", &app::carried_options, py::arg("wsclean_args"), py::arg("gpuclean_args"));
  // WSClean's command line read by the WSClean option table: (name without dashes as WSClean 3.7
  // spells it, values) in order; aliases (WSClean 3.1's -channelsout ...) read as their option.
  m.def(
      "wsclean_read",
      [](const std::vector<std::string>& args) {
        std::vector<std::pair<std::string, std::vector<std::string>>> out;
        for (const app::ReadOption& read : app::read_wsclean_command(args).options)
          out.emplace_back(read.row ? read.row->name() : read.given.option, read.given.values);
        return out;
      },
      py::arg("wsclean_args"));
  m.def("wsclean_hook_refusal", &app::hook_refusal, py::arg("wsclean_args"));
  m.def("wsclean_hook_ignored", &app::hook_ignored, py::arg("wsclean_args"));
  m.def("split_options", &app::split_words, py::arg("text"));
  m.def("device_is_cpu", &app::device_is_cpu, py::arg("gpuclean_options"));
  py::class_<Session>(m, "OuterLoopSession")
      .def(py::init<const std::vector<std::string>&>(), py::arg("args"))
      .def(py::init<const app::WscleanSessionSettings&>(), py::arg("settings"))
      .def("wsclean_round", &Session::wsclean_round, py::arg("meta"), py::arg("budget") = py::none())
      .def("start", &Session::start, py::arg("residual"), py::arg("psf"), py::arg("frequencies"), py::arg("weights"),
           py::arg("polarization_factor"))
      .def("set_residual", &Session::set_residual, py::arg("residual"))
      .def("peak", &Session::peak)
      .def("clean", &Session::clean, py::arg("floor"), py::arg("round_gain"), py::arg("budget"))
      .def("models", &Session::models)
      .def("add_model_change", &Session::add_model_change, py::arg("model"))
      .def("residuals", &Session::residuals)
      .def("iterations", &Session::iterations)
      .def_property_readonly("device", &Session::device)
      .def_property_readonly("niter", [](const Session& s) { return s.settings().niter; })
      .def_property_readonly("threshold", [](const Session& s) { return s.settings().threshold; })
      // (terms, logarithmic) of the spectral fit in force; (0, False) without one.
      .def_property_readonly("spectral_fit", [](const Session& s) {
        const clean::CleanSettings& c = s.settings();
        return c.fit_spectral_log_pol ? py::make_tuple(c.fit_spectral_log_pol, true)
                                      : py::make_tuple(c.fit_spectral_pol, false);
      })
      .def_property_readonly("auto_threshold", [](const Session& s) { return s.settings().auto_threshold; })
      .def_property_readonly("algorithm", [](const Session& s) {
        return s.settings().multiscale.enabled ? std::string("multiscale")
                                               : std::string(clean::to_string(s.settings().algorithm));
      });
}

}  // namespace gpuclean::python
