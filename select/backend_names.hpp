#pragma once
// The names --select accepts, known in every build: a CPU-only build checks a job's --select
// exactly as a GPU build does, so a typo is caught wherever the job is first tried.

#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::select {

/// The exact GPU selection backends CLEAN may use, `auto` (the default) first: the registry's
/// exact backends without the CPU reference (a test checks the two agree in CUDA builds).
const std::vector<std::string>& clean_backend_names();

/// True when `name` is one of clean_backend_names().
bool is_clean_backend(std::string_view name);

/// "auto, sort, ...": the list for messages.
std::string clean_backend_list();

}  // namespace gpuclean::select
