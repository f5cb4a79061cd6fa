#pragma once
// A bump allocator over a Workspace. With a null base it only measures, so the same code path
// computes a backend's workspace size and lays the workspace out.

#include <cstddef>
#include <stdexcept>

namespace gpuclean::select::detail {

class Arena {
 public:
  Arena() = default;
  Arena(std::byte* base, std::size_t capacity) : base_(base), capacity_(capacity) {}

  template <class T>
  T* take(std::size_t count) {
    const std::size_t offset = used_;
    used_ += round_up(count * sizeof(T));
    if (!base_) return nullptr;
    if (used_ > capacity_) throw std::logic_error("selection workspace too small (internal)");
    return reinterpret_cast<T*>(base_ + offset);
  }
  std::size_t used() const { return used_; }

 private:
  static std::size_t round_up(std::size_t b) { return (b + 255) / 256 * 256; }
  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

/// An arena over a workspace grown to `bytes` (reserve first: the capacity is read after it).
template <class Workspace>
Arena arena_for(Workspace& ws, std::size_t bytes) {
  std::byte* base = ws.reserve(bytes);
  return Arena(base, ws.capacity());
}

}  // namespace gpuclean::select::detail
