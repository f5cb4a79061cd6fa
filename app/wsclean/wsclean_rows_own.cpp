// gpuclean image's own options, beside WSClean's in the same table (WSClean has none of them).
#include "app/wsclean/wsclean_rows.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

namespace {

WscleanOption own(WscleanOption row) {
  row.own = true;
  return row;
}

}  // namespace

void own_rows(std::vector<WscleanOption>& rows) {
  add(rows, "GPUCLEAN'S OWN OPTIONS",
      {
          own(yes("device", 1, "auto|gpu|cpu", "Where to grid and clean (default auto: the GPU when there is one).",
                  [](ImageOptions& o, const GivenOption& g) {
                    const std::string d = v::choice(g, {"auto", "gpu", "cpu"});
                    o.device = d == "auto" ? clean::Device::kAuto : d == "gpu" ? clean::Device::kGpu : clean::Device::kCpu;
                  })),
          own(yes("max-gpus", 1, "<count>",
                  "Spread the output channels over at most this many of the visible GPUs (default 0: all).",
                  [](ImageOptions& o, const GivenOption& g) { o.max_gpus = v::count(g); })),
          own(yes("json", 1, "<file>", "The run's JSON summary (- for stdout; with -niter > 0).",
                  [](ImageOptions& o, const GivenOption& g) { o.json = g.values[0]; })),
      });
}

}  // namespace gpuclean::app::wsclean_rows
