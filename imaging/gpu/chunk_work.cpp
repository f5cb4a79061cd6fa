// The plan as kernels see it, the sort key's layout, and a chunk's device buffers.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "imaging/gpu/gridder_device.hpp"
#include "imaging/gpu/sample_order.hpp"
#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging::gpu {
namespace {

int tile_bits(std::size_t cells) {
  const std::size_t tiles = (cells + kTile - 1) / kTile;
  return static_cast<int>(std::bit_width(tiles - 1));
}

}  // namespace

DeviceGeometry device_geometry(const GridPlan& plan) {
  const EsKernel& k = plan.kernel;
  if (k.support() < kMinSupport || k.support() > kMaxSupport)
    throw std::invalid_argument("the GPU gridder supports kernels of " + std::to_string(kMinSupport) + " to " +
                                std::to_string(kMaxSupport) + " cells, not " + std::to_string(k.support()));
  if (k.quadrature_nodes().size() > static_cast<std::size_t>(kMaxQuadratureNodes))
    throw std::invalid_argument("the GPU gridder's kernel correction takes at most 32 quadrature nodes");
  if (plan.nu > (1u << 30) || plan.nv > (1u << 30) || plan.image.width > plan.nu || plan.image.height > plan.nv)
    throw std::invalid_argument("the GPU gridder needs a grid of at most 2^30 cells a side, and the image inside it");
  DeviceGeometry g;
  g.nu = static_cast<int>(plan.nu);
  g.nv = static_cast<int>(plan.nv);
  g.tile_bits_u = tile_bits(plan.nu);
  g.tile_bits_v = tile_bits(plan.nv);
  g.width = static_cast<int>(plan.image.width);
  g.height = static_cast<int>(plan.image.height);
  g.scale = plan.image.scale;
  g.su = plan.image.scale * static_cast<double>(plan.nu);  // invert_cpu's su, sv
  g.sv = plan.image.scale * static_cast<double>(plan.nv);
  g.wstacking = plan.wstacking;
  g.w0 = plan.w0;
  g.dw = plan.dw;
  g.nshift = plan.nshift;
  g.support = k.support();
  g.beta_w = k.beta() * k.support();
  g.e0 = static_cast<float>(k.e0());
  g.nodes = static_cast<int>(k.quadrature_nodes().size());
  std::copy(k.quadrature_nodes().begin(), k.quadrature_nodes().end(), g.node);
  std::copy(k.quadrature_weights().begin(), k.quadrature_weights().end(), g.weight);
  return g;
}

KeyLayout key_layout(const DeviceGeometry& g, const Chunk& chunk) {
  KeyLayout k;
  k.p0_base = chunk.first_plane;
  k.groups = chunk.last_plane - chunk.first_plane + 1;
  k.bits_u = g.tile_bits_u;
  k.bits_v = g.tile_bits_v;
  k.bits_p = static_cast<int>(std::bit_width(static_cast<unsigned>(k.groups - 1)));
  // group_offsets searches for `groups << shift`, one bit above the key.
  if (k.end_bit() > 63) throw std::runtime_error("the GPU gridder's sort key needs more than 63 bits");
  return k;
}

std::size_t ChunkWork::bytes_per_sample(bool invert, int images) {
  std::size_t b = 3 * sizeof(double)                          // u, v, w
                  + 2 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t)  // keys and positions, sorted and not
                  + 3 * sizeof(double) + 2 * sizeof(int);     // du, dv, kw, iu, iv
  if (invert)
    b += sizeof(float2) + sizeof(float)                       // vis, weight
         + static_cast<std::size_t>(images) * sizeof(float2)  // values
         + 2 * sizeof(std::uint32_t) + sizeof(std::uint8_t);  // segment starts, subproblem starts and flags
  else
    b += 2 * sizeof(double2);  // sums in sorted order, results in chunk order
  return b;
}

std::size_t ChunkWork::bytes_besides(std::size_t capacity, std::size_t max_groups) {
  return prep_temp_bytes(capacity) + (2 * (max_groups + 1) + 2) * sizeof(std::uint32_t) + sizeof(std::uint32_t);
}

ChunkWork::ChunkWork(std::size_t capacity_, int max_groups, bool invert_, int images_, cudaStream_t s)
    : capacity(capacity_), invert(invert_), images(images_) {
  const std::size_t n = capacity;
  u = {n, s}, v = {n, s}, w = {n, s};
  for (int i = 0; i < 2; ++i) key[i] = {n, s}, index[i] = {n, s};
  du = {n, s}, dv = {n, s}, kw = {n, s};
  iu = {n, s}, iv = {n, s};
  if (invert) {
    vis = {n, s};
    weight = {n, s};
    for (int i = 0; i < images; ++i) value[i] = {n, s};
    seg_start = {n, s};
    sub_start = {n + 1, s};
    sub_flag = {n, s};
  } else {
    acc = {n, s};
    out = {n, s};
  }
  offsets = {2 * (static_cast<std::size_t>(max_groups) + 1) + 2, s};
  temp = {prep_temp_bytes(n), s};
}

RawChunk ChunkWork::raw() const { return {u.data(), v.data(), w.data(), vis.data(), weight.data()}; }

Records ChunkWork::records() const {
  Records r;
  r.key = key[current].data();
  r.index = index[current].data();
  r.du = du.data();
  r.dv = dv.data();
  r.kw = kw.data();
  r.iu = iu.data();
  r.iv = iv.data();
  r.value[0] = value[0].data();
  r.value[1] = value[1].data();
  r.sub_start = sub_start.data();
  return r;
}

}  // namespace gpuclean::imaging::gpu
