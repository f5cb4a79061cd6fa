#include "clean/interaction_clusters.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace gpuclean::clean {
namespace {

struct Box {
  std::int64_t x0 = std::numeric_limits<std::int64_t>::max(), y0 = std::numeric_limits<std::int64_t>::max();
  std::int64_t x1 = -1, y1 = -1;
  bool empty() const { return x1 < 0; }
};

std::uint32_t find_root(std::vector<std::uint32_t>& parent, std::uint32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

InteractionGrid interaction_grid(std::size_t half_width, std::size_t width, std::size_t height) {
  InteractionGrid g;
  const double pixels = static_cast<double>(width) * static_cast<double>(height);
  const auto coarse = static_cast<std::size_t>(std::ceil(std::sqrt(pixels / static_cast<double>(kMaxInteractionCells))));
  g.cell = std::max({half_width + 1, coarse, std::size_t{1}});
  g.gx = std::max<std::size_t>(1, (width + g.cell - 1) / g.cell);
  g.gy = std::max<std::size_t>(1, (height + g.cell - 1) / g.cell);
  return g;
}

std::vector<std::uint32_t> interaction_clusters(std::span<const ActiveMember> members, std::size_t half_width,
                                                std::size_t width, std::size_t height) {
  const InteractionGrid g = interaction_grid(half_width, width, height);
  const auto hw = static_cast<std::int64_t>(half_width);
  std::vector<Box> box(g.cells());
  std::vector<std::uint32_t> cell_of(members.size());
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto x = static_cast<std::size_t>(members[m].x), y = static_cast<std::size_t>(members[m].y);
    const std::size_t c = (y / g.cell) * g.gx + x / g.cell;
    cell_of[m] = static_cast<std::uint32_t>(c);
    Box& b = box[c];
    b.x0 = std::min<std::int64_t>(b.x0, members[m].x);
    b.x1 = std::max<std::int64_t>(b.x1, members[m].x);
    b.y0 = std::min<std::int64_t>(b.y0, members[m].y);
    b.y1 = std::max<std::int64_t>(b.y1, members[m].y);
  }
  std::vector<std::uint32_t> parent(g.cells());
  std::iota(parent.begin(), parent.end(), 0u);
  // Forward neighbours only (east, south-west, south, south-east): each adjacent pair once.
  const std::int64_t offsets[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
  for (std::size_t cy = 0; cy < g.gy; ++cy) {
    for (std::size_t cx = 0; cx < g.gx; ++cx) {
      const std::size_t c = cy * g.gx + cx;
      if (box[c].empty()) continue;
      for (const auto& o : offsets) {
        const std::int64_t nx = static_cast<std::int64_t>(cx) + o[0], ny = static_cast<std::int64_t>(cy) + o[1];
        if (nx < 0 || ny < 0 || nx >= static_cast<std::int64_t>(g.gx) || ny >= static_cast<std::int64_t>(g.gy)) continue;
        const std::size_t d = static_cast<std::size_t>(ny) * g.gx + static_cast<std::size_t>(nx);
        const Box &a = box[c], &b = box[d];
        if (b.empty()) continue;
        const std::int64_t gap_x = std::max({std::int64_t{0}, b.x0 - a.x1, a.x0 - b.x1});
        const std::int64_t gap_y = std::max({std::int64_t{0}, b.y0 - a.y1, a.y0 - b.y1});
        if (gap_x > hw || gap_y > hw) continue;
        const std::uint32_t ra = find_root(parent, static_cast<std::uint32_t>(c));
        const std::uint32_t rb = find_root(parent, static_cast<std::uint32_t>(d));
        if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
      }
    }
  }
  std::vector<std::uint32_t> labels(members.size());
  for (std::size_t m = 0; m < members.size(); ++m) labels[m] = find_root(parent, cell_of[m]);
  return labels;
}

std::vector<Component> merge_cluster_sequences(const std::vector<std::vector<SequencedComponent>>& sequences,
                                               std::size_t budget) {
  struct Entry {
    std::uint64_t e;
    std::size_t cluster, index;
  };
  std::vector<Entry> all;
  for (std::size_t c = 0; c < sequences.size(); ++c) {
    std::uint64_t e = ~std::uint64_t{0};
    for (std::size_t i = 0; i < sequences[c].size(); ++i) {
      e = std::min(e, sequences[c][i].peak);
      all.push_back({e, c, i});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.e > b.e; });
  std::vector<Component> out;
  for (std::size_t i = 0; i < std::min(budget, all.size()); ++i)
    out.push_back(sequences[all[i].cluster][all[i].index].component);
  return out;
}

std::size_t clustered_minor_cycle_cpu(const PreparedPsf& psf, std::size_t half_width, std::size_t width,
                                      std::size_t height, const std::vector<ActiveMember>& active, double limit,
                                      double gain, bool allow_negative, std::size_t budget,
                                      std::vector<Component>* components) {
  const std::vector<std::uint32_t> labels = interaction_clusters(active, half_width, width, height);
  std::vector<std::uint32_t> order(active.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return labels[a] < labels[b]; });
  MinorCycleCpu minor(psf, half_width, width, width * height);
  std::vector<std::vector<SequencedComponent>> sequences;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    std::vector<ActiveMember> members;
    while (j < order.size() && labels[order[j]] == labels[order[i]]) members.push_back(active[order[j++]]);
    std::vector<Component> made;
    std::vector<std::uint64_t> peaks;
    minor.run(members, limit, gain, allow_negative, budget, &made, &peaks);
    std::vector<SequencedComponent> seq(made.size());
    for (std::size_t c = 0; c < made.size(); ++c) seq[c] = {made[c], peaks[c]};
    sequences.push_back(std::move(seq));
    i = j;
  }
  const std::vector<Component> merged = merge_cluster_sequences(sequences, budget);
  components->insert(components->end(), merged.begin(), merged.end());
  return merged.size();
}

}  // namespace gpuclean::clean
