#include "imaging/predict_run.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "clean/errors.hpp"
#include "imaging/image_run.hpp"
#include "imaging/weight_grid.hpp"
#include "io/ms/ms_error.hpp"
#include "io/ms/ms_reader.hpp"
#include "io/ms/model_journal.hpp"
#include "io/staged_outputs.hpp"

namespace gpuclean::imaging {
std::vector<ModelRows> read_model_rows(const std::vector<io::ms::MsSelection>& selections) {
  std::vector<ModelRows> sets;
  for (const io::ms::MsSelection& sel : selections) {
    io::ms::MsReader reader(sel);
    io::ms::VisChunk chunk;
    ModelRows& r = sets.emplace_back();
    while (reader.next(chunk)) {
      r.row.insert(r.row.end(), chunk.row.begin(), chunk.row.end());
      r.u.insert(r.u.end(), chunk.u.begin(), chunk.u.end());
      r.v.insert(r.v.end(), chunk.v.begin(), chunk.v.end());
      r.w.insert(r.w.end(), chunk.w.begin(), chunk.w.end());
    }
    // Flagged rows are predicted as well, so only an empty selection is refused.
    if (r.row.empty())
      throw io::ms::MsError(io::ms::MsError::Kind::kEmpty, "'" + sel.path + "' has no rows in the selection");
    r.model.assign(r.row.size() * (sel.channel_end - sel.channel_begin), {});
  }
  return sets;
}

PredictRunResult predict_model_rows(std::vector<ModelRows>& sets, const std::vector<io::ms::MsSelection>& selections,
                                    const PredictRunSettings& settings, const ModelSource& models) {
  const std::size_t nchan = selections.front().freq_hz.size();
  const ImageGeometry& image = settings.image;

  PredictRunResult result;
  for (const auto& [begin, end] : output_channel_ranges(selections.front().freq_hz, settings.channels_out, settings.channel_division_hz)) {
    // Every (row, channel) of the range over every MS, in wavelengths of its channel.
    std::vector<double> u, v, w;
    for (std::size_t m = 0; m < sets.size(); ++m)
      for (std::size_t r = 0; r < sets[m].row.size(); ++r)
        for (std::size_t ch = begin; ch < end; ++ch) {
          const double lambda = wavelength_m(selections[m].freq_hz[ch]);
          u.push_back(sets[m].u[r] / lambda);
          v.push_back(sets[m].v[r] / lambda);
          w.push_back(sets[m].w[r] / lambda);
        }
    const std::vector<double> model = models(result.channels.size());
    if (model.size() != image.width * image.height)
      throw clean::InvalidInput("the model of output channel " + std::to_string(result.channels.size()) +
                                " does not have " + std::to_string(image.width) + "x" +
                                std::to_string(image.height) + " pixels");
    // predict_cpu's contract: the plan covers every sample's |w|, so unit weights for the range.
    const std::vector<float> ones(w.size(), 1.0f);
    const GridPlan plan = choose_grid_plan(image, settings.epsilon, w_range(w, ones), w.size());
    const std::vector<std::complex<double>> vis =
        settings.backend(plan, model, Samples{u, v, w, {}, {}}, settings.threads);
    if (vis.size() != w.size()) throw std::logic_error("the predict backend returned the wrong number of values");

    std::size_t k = 0;
    for (std::size_t m = 0; m < sets.size(); ++m)
      for (std::size_t r = 0; r < sets[m].row.size(); ++r)
        for (std::size_t ch = begin; ch < end; ++ch) sets[m].model[r * nchan + ch] = std::complex<float>(vis[k++]);
    result.channels.push_back({begin, end, w.size(), plan.planes, static_cast<std::size_t>(plan.kernel.support())});
  }
  return result;
}

void stage_model_rows(const std::vector<ModelRows>& sets, const std::vector<io::ms::MsSelection>& selections,
                      PredictRunResult& result, io::StagedOutputs& staged, const std::string& dir, bool later) {
  for (std::size_t m = 0; m < sets.size(); ++m) {
    // One journal per MS and polarization, applied in the order staged.
    const std::string name = "model-" + std::to_string(m) + "-" + io::ms::pol_name(selections[m].pol) + ".journal";
    io::ms::write_model_journal(staged.stage_journal(dir, name, selections[m].path), selections[m], sets[m].row,
                                sets[m].model, later ? std::optional<bool>(false) : std::nullopt);
    result.rows += sets[m].row.size();
  }
}

PredictRunResult predict_run(const std::vector<io::ms::MsSelection>& selections, const PredictRunSettings& settings,
                             const ModelSource& models) {
  std::vector<ModelRows> sets = read_model_rows(selections);
  PredictRunResult result = predict_model_rows(sets, selections, settings, models);
  // Only now: a failure above leaves every MS as it was. The journals wait beside the first MS.
  io::StagedOutputs staged(true);
  std::filesystem::path folder = std::filesystem::absolute(selections.front().path).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  stage_model_rows(sets, selections, result, staged, folder.parent_path().string());
  staged.commit();
  return result;
}

}  // namespace gpuclean::imaging
