#pragma once
namespace gpuclean::app {
inline constexpr const char* kVersion = "0.1.0";
}
