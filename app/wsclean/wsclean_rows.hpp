#pragma once
// Building the option table (wsclean_option.hpp): row makers and the sections' rows, one file per
// group of WSClean's -help sections. Internal to app/wsclean.
#include <string>
#include <vector>

#include "app/image/image_options.hpp"
#include "app/wsclean/wsclean_option.hpp"
#include "app/wsclean/wsclean_values.hpp"

namespace gpuclean::app::wsclean_rows {

/// `names`: WSClean 3.7's name first, then its aliases, comma-separated ("abs-mem,absmem").
WscleanOption yes(const std::string& names, int values, std::string metavar, std::string meaning, ImageApply apply,
                  std::string remark = {});
/// `how`: how gpuclean reaches the meaning. Without `apply` the run's note is "-NAME VALUES: how".
WscleanOption mapped(const std::string& names, int values, std::string metavar, std::string meaning, std::string how,
                     ImageApply apply = {});
WscleanOption refused(const std::string& names, int values, std::string metavar, std::string meaning, std::string why);
WscleanOption not_yet(const std::string& names, int values, std::string metavar, std::string meaning, std::string why);

/// The hook's column (wsclean_option.hpp HookUse).
WscleanOption carried(WscleanOption row, std::string long_name, std::vector<std::string> implies = {});
WscleanOption negating(WscleanOption row, std::string long_name);
WscleanOption meta(WscleanOption row, std::string long_name);
WscleanOption layout(WscleanOption row, std::string long_name);
WscleanOption no_meaning(WscleanOption row);
WscleanOption hook_refused(WscleanOption row, std::string why);

/// Appends `list` to `rows` under WSClean's -help heading `section`.
void add(std::vector<WscleanOption>& rows, const std::string& section, std::vector<WscleanOption> list);

/// The note a mapped option leaves for the run's first lines: "-OPTION VALUES: text".
void note(ImageOptions& o, const GivenOption& g, const std::string& text);

// WSClean's -help sections (W37:main/commandline.cpp PrintHelp).
void general_rows(std::vector<WscleanOption>& rows);        // GENERAL OPTIONS
void inversion_rows(std::vector<WscleanOption>& rows);      // INVERSION OPTIONS, GRIDDER-SPECIFIC SETTINGS
void selection_rows(std::vector<WscleanOption>& rows);      // DATA SELECTION OPTIONS, WEIGHTING OPTIONS
void deconvolution_rows(std::vector<WscleanOption>& rows);  // DECONVOLUTION OPTIONS
void restore_rows(std::vector<WscleanOption>& rows);        // SKY MODEL DRAWING (restoring beam) OPTIONS
void beam_rows(std::vector<WscleanOption>& rows);           // primary beam, A-TERM GRIDDING, facets, MPI
void own_rows(std::vector<WscleanOption>& rows);            // gpuclean's own options

}  // namespace gpuclean::app::wsclean_rows
