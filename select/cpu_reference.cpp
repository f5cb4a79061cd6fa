#include "select/cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace gpuclean::select {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> valid_keys(std::span<const float> values, Order order) {
  std::vector<float> keys;
  keys.reserve(values.size());
  for (float x : values) {
    if (!std::isnan(x)) keys.push_back(select_key(x, order));
  }
  return keys;
}

}  // namespace

float kth_key_cpu(std::span<const float> values, std::size_t k, Order order) {
  std::vector<float> keys = valid_keys(values, order);
  if (k == 0 || k > keys.size()) return kNaN;
  auto nth = keys.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(keys.begin(), nth, keys.end(), std::greater<float>());
  return *nth;
}

TopK top_k_cpu(std::span<const float> values, const SelectRequest& request) {
  check_top_k(values.size(), request);
  TopK out;
  std::vector<float> keys = valid_keys(values, request.order);
  const std::size_t k = std::min(request.k, keys.size());
  if (k == 0) return out;
  auto nth = keys.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(keys.begin(), nth, keys.end(), std::greater<float>());
  const float kth = *nth;
  keys = {};

  // One scan in index order: every key above the k-th, and the first (lowest-index) ties.
  std::size_t n_above = 0;
  for (float x : values) {
    if (!std::isnan(x) && select_key(x, request.order) > kth) ++n_above;
  }
  std::size_t ties_wanted = k - n_above;
  out.values.reserve(k);
  out.indices.reserve(k);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float x = values[i];
    if (std::isnan(x)) continue;
    const float key = select_key(x, request.order);
    if (key > kth || (key == kth && ties_wanted > 0)) {
      if (key == kth) --ties_wanted;
      out.values.push_back(x);
      out.indices.push_back(static_cast<std::uint32_t>(i));
    }
  }

  if (request.sorted_output) {
    std::vector<std::size_t> perm(out.values.size());
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
      const float ka = select_key(out.values[a], request.order);
      const float kb = select_key(out.values[b], request.order);
      return ka != kb ? ka > kb : out.indices[a] < out.indices[b];
    });
    TopK sorted;
    sorted.values.reserve(perm.size());
    sorted.indices.reserve(perm.size());
    for (std::size_t p : perm) {
      sorted.values.push_back(out.values[p]);
      sorted.indices.push_back(out.indices[p]);
    }
    return sorted;
  }
  return out;
}

float order_statistic_cpu(std::span<const float> values, std::size_t rank) {
  const std::size_t rank_arr[] = {rank};
  return multiselect_cpu(values, rank_arr).front();
}

std::vector<float> multiselect_cpu(std::span<const float> values,
                                   std::span<const std::size_t> ranks) {
  std::vector<float> sorted_vals;
  sorted_vals.reserve(values.size());
  for (float x : values) {
    if (!std::isnan(x)) sorted_vals.push_back(x + 0.0f);
  }
  // Many ranks: one sort (nth_element per rank would cost ranks x n).
  if (ranks.size() > 64) {
    std::sort(sorted_vals.begin(), sorted_vals.end());
    std::vector<float> result(ranks.size(), kNaN);
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i] < sorted_vals.size()) result[i] = sorted_vals[ranks[i]];
    return result;
  }
  // Select ranks in increasing order so each nth_element works on the remaining suffix only.
  std::vector<std::size_t> order(ranks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  std::vector<float> result(ranks.size(), kNaN);
  auto first = sorted_vals.begin();
  for (std::size_t o : order) {
    const std::size_t r = ranks[o];
    if (r >= sorted_vals.size()) continue;
    auto nth = sorted_vals.begin() + static_cast<std::ptrdiff_t>(r);
    if (nth >= first) {
      std::nth_element(first, nth, sorted_vals.end());
      first = nth;
    }
    result[o] = *nth;
  }
  return result;
}

std::size_t count_keys_above_cpu(std::span<const float> values, float limit, Order order) {
  std::size_t count = 0;
  for (float x : values) {
    if (!std::isnan(x) && select_key(x, order) > limit) ++count;
  }
  return count;
}

}  // namespace gpuclean::select
