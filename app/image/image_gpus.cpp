#include "app/image/image_gpus.hpp"

#include <sstream>

#include "clean/errors.hpp"

namespace gpuclean::app {

std::vector<int> image_gpus(std::size_t max_gpus, int visible, const std::string& test_list) {
  std::vector<int> gpus;
  if (!test_list.empty()) {
    std::istringstream words(test_list);
    for (std::string word; std::getline(words, word, ',');) {
      std::size_t end = 0;
      int g = -1;
      try {
        g = std::stoi(word, &end);
      } catch (const std::exception&) {
        end = 0;
      }
      if (end != word.size() || word.empty() || g < 0 || g >= visible)
        throw clean::InvalidSettings("GPUCLEAN_TEST_IMAGE_GPUS '" + test_list + "': '" + word + "' is not one of the " +
                                     std::to_string(visible) + " visible GPUs");
      gpus.push_back(g);
    }
    if (test_list.back() == ',')  // getline gives no empty last word
      throw clean::InvalidSettings("GPUCLEAN_TEST_IMAGE_GPUS '" + test_list + "' ends with a comma");
    return gpus;
  }
  for (int g = 0; g < visible && (max_gpus == 0 || gpus.size() < max_gpus); ++g) gpus.push_back(g);
  return gpus;
}

std::string gpu_list_text(const std::vector<int>& gpus) {
  std::ostringstream text;
  for (std::size_t k = 0; k < gpus.size(); ++k) text << (k ? "," : "") << gpus[k];
  return text.str();
}

}  // namespace gpuclean::app
