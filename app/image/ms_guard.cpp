#include "app/image/ms_guard.hpp"

#include <filesystem>
#include <set>
#include <string>

#include "app/image/image_log.hpp"
#include "app/image/image_outputs.hpp"
#include "io/ms/model_journal.hpp"
#include "io/stage_folder.hpp"
#include "io/test_pause.hpp"

namespace gpuclean::app {

bool writes_model_data(const ImageOptions& o) {
  if (o.predict) return true;
  return o.niter > 0 && o.deconvolution.mgain < 1 && o.deconvolution.update_model_required;
}

ImageRunGuard::ImageRunGuard(const ImageOptions& o) {
  io::ms::register_model_journal();
  if (writes_model_data(o)) {
    for (const std::string& ms : o.ms) {
      locks_.push_back(std::make_unique<io::ms::MsWriteLock>(ms));
      if (o.dry_run) continue;  // -dry-run changes nothing
      const std::string line = io::ms::settle_stopped_commit(ms);
      if (!line.empty()) image_log::info("gpuclean image: %s", line.c_str());
    }
  }
  if (o.predict || o.dry_run) return;  // no outputs but MODEL_DATA; or nothing at all
  std::set<std::string> folders;
  for (const std::string& path : image_output_paths(o)) {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    folders.insert(folder.empty() ? "." : folder);
  }
  for (const std::string& folder : folders)
    for (const std::string& line : io::sweep_stopped_runs(folder)) image_log::info("gpuclean image: %s", line.c_str());
  io::test_pause("read");
}

}  // namespace gpuclean::app
