#include "select/registry.hpp"

#include <stdexcept>

#include "select/backends/auto_select.hpp"
#include "select/backend_names.hpp"
#include "select/backends/backends.hpp"

namespace gpuclean::select {

void Registry::add(std::string name, std::string description, Factory make) {
  if (contains(name)) throw std::invalid_argument("selection backend '" + name + "' registered twice");
  entries_.push_back({std::move(name), std::move(description), std::move(make)});
}

bool Registry::contains(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

std::unique_ptr<Selector> Registry::make(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.make();
  std::string valid;
  for (const auto& e : entries_) valid += (valid.empty() ? "" : ", ") + e.name;
  throw std::invalid_argument("unknown selection backend '" + std::string(name) + "'; valid: " + valid);
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::string Registry::description(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.description;
  return {};
}

namespace {

Registry::Factory factory_of(BackendId id) {
  switch (id) {  // exhaustive: a new backend is a row of kBackendNames and a case here
    case BackendId::kAuto: return make_auto_selector;
    case BackendId::kCpu: return make_cpu_selector;
    case BackendId::kSort: return make_sort_selector;
    case BackendId::kRandomized: return make_randomized_selector;
    case BackendId::kSample: return make_sample_selector;
    case BackendId::kSampleApprox: return make_sample_approx_selector;
    case BackendId::kBucket: return make_bucket_selector;
    case BackendId::kCuttingPlane: return make_cutting_plane_selector;
  }
  throw std::logic_error("unknown selection backend id");
}

}  // namespace

void register_builtin_backends(Registry& r) {
  for (const BackendName& b : kBackendNames) r.add(std::string(b.name), std::string(b.description), factory_of(b.id));
}

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_backends(r);
    return r;
  }();
  return registry;
}

}  // namespace gpuclean::select
