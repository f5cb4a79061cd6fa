#pragma once
// What the GPU gridder's host driver and its kernels share: the plan as kernels see it, a chunk's
// device buffers, and the typed launch wrappers (defined in vis_prep.cu, grid_kernels.cu,
// screen_kernels.cu). Host-compilable and C++17 (nvcc compiles the project's CUDA as C++17, so
// this header must not pull in gridder_cpu.hpp's std::span); everything enqueues on the given
// stream unless it says so.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "select/cuda/device_buffer.hpp"

namespace gpuclean::imaging {
struct GridPlan;
}

namespace gpuclean::imaging::gpu {

struct Chunk;

constexpr int kTile = 32;                // tile side in grid cells (the sort key's tiles)
constexpr int kMaxSubproblem = 1024;     // samples one gridding block takes at most
constexpr int kMaxQuadratureNodes = 32;  // EsKernel uses ⌊1.5 W⌋ + 2 ≤ 14 for W ≤ 8
constexpr int kMinSupport = 4, kMaxSupport = 8;  // the kernels are instantiated for these W

/// The plan as kernels see it (passed by value).
struct DeviceGeometry {
  int nu = 0, nv = 0;          // grid cells along u and v
  int tile_bits_u = 0, tile_bits_v = 0;  // bits of a tile column / row index in the sort key
  int width = 0, height = 0;   // image pixels
  double scale = 0;            // pixel size (radians)
  double su = 0, sv = 0;       // scale·nu, scale·nv: Ku = −u·su, Kv = v·sv (after the flip)
  bool wstacking = true;
  double w0 = 0, dw = 1, nshift = 0;
  int support = 0;             // W
  double beta_w = 0;           // φ(x) = exp(β W ((1 − x²)^e0 − 1))
  float e0 = 0;
  int nodes = 0;               // c(s) = 1 / (2 Σ q_i cos(π W s x_i))
  double node[kMaxQuadratureNodes] = {}, weight[kMaxQuadratureNodes] = {};
};
/// Throws std::invalid_argument for a support the kernels are not instantiated for.
DeviceGeometry device_geometry(const GridPlan& plan);

/// How a chunk's sort key is laid out: (p0 − p0_base) << (bits_u + bits_v) | tile_v << bits_u | tile_u.
struct KeyLayout {
  int p0_base = 0, groups = 1;  // first planes p0_base ..< p0_base + groups
  int bits_u = 0, bits_v = 0, bits_p = 0;
  int end_bit() const { return bits_p + bits_u + bits_v; }
  int shift() const { return bits_u + bits_v; }
};
/// Throws std::runtime_error when the key would need more than 63 bits.
KeyLayout key_layout(const DeviceGeometry& g, const Chunk& chunk);

/// A chunk as uploaded (device pointers, in the host's first-plane order); vis and weight are
/// only there for the inversion, vis only for a dirty image.
struct RawChunk {
  const double *u = nullptr, *v = nullptr, *w = nullptr;
  const float2* vis = nullptr;
  const float* weight = nullptr;
};

/// The sorted samples as kernels read them: one entry per sample in (p0, tile row, tile column)
/// order. The kernel's footprint along u is cells iu + a (a < W, not yet wrapped, shifted by a
/// multiple of nu so that ⌊Ku⌋ lies in [0, nu)) with weights φ((a − du)/h); the same along v;
/// along w, plane p has weight φ((p − kw)/h).
struct Records {
  const std::uint64_t* key = nullptr;
  const std::uint32_t* index = nullptr;  // position in the chunk
  const double *du = nullptr, *dv = nullptr, *kw = nullptr;
  const int *iu = nullptr, *iv = nullptr;
  const float2* value[2] = {nullptr, nullptr};  // cw·V·e^{2πi|w|nshift} (V conjugated when flipped); PSF: V = 1
  const std::uint32_t* sub_start = nullptr;     // subproblem s: [sub_start[s], sub_start[s + 1])
};

/// Per first-plane group g (p0 = p0_base + g) of a prepared chunk: its samples start at
/// sample_offset[g] and its subproblems at sub_offset[g]; entry `groups` ends the last group.
struct ChunkIndex {
  std::vector<std::uint32_t> sample_offset, sub_offset;
};

/// A chunk's device buffers for up to `capacity` samples, allocated once per call.
class ChunkWork {
 public:
  ChunkWork(std::size_t capacity, int max_groups, bool invert, int images, cudaStream_t stream);

  /// The bytes each sample of a chunk costs, and those a chunk costs besides (CUB's scratch for
  /// `capacity`, the group offsets); the memory plan and the constructor agree by construction.
  static std::size_t bytes_per_sample(bool invert, int images);
  static std::size_t bytes_besides(std::size_t capacity, std::size_t max_groups);

  RawChunk raw() const;
  /// Valid after prepare_chunk.
  Records records() const;

  std::size_t capacity;
  bool invert;
  int images;
  cuda::DeviceBuffer<double> u, v, w;
  cuda::DeviceBuffer<float2> vis;
  cuda::DeviceBuffer<float> weight;
  cuda::DeviceBuffer<std::uint64_t> key[2];
  cuda::DeviceBuffer<std::uint32_t> index[2];
  int current = 0;  // which of key/index holds the sorted order
  cuda::DeviceBuffer<double> du, dv, kw;
  cuda::DeviceBuffer<int> iu, iv;
  cuda::DeviceBuffer<float2> value[2];
  cuda::DeviceBuffer<std::uint32_t> seg_start, sub_start;  // invert only
  cuda::DeviceBuffer<std::uint8_t> sub_flag;               // invert only
  cuda::DeviceBuffer<std::uint32_t> offsets;  // 2·(max_groups + 1) + 2: samples, subproblems, count, scratch
  cuda::DeviceBuffer<std::byte> temp;                      // CUB
  cuda::DeviceBuffer<double2> acc, out;                    // predict only: sorted sums, chunk-order results
};

/// Keys, radix sort, records and (invert) tile subproblems of the first `n` samples of `work`;
/// then downloads the group offsets, so it returns after the stream has done all of it.
/// `dirty`/`psf`: which values the records get (value[0] is the first asked for).
ChunkIndex prepare_chunk(cudaStream_t stream, const DeviceGeometry& g, const KeyLayout& layout, std::size_t n,
                         ChunkWork& work, bool dirty, bool psf);

/// Predict: out[index[j]] = acc[j]·e^{−2πi|w|nshift}, conjugated for flipped samples (chunk order).
void finish_predict(cudaStream_t stream, const DeviceGeometry& g, const Records& r, const double* w, std::size_t n,
                    const double2* acc, double2* out);

/// Grids subproblems [sub_begin, sub_end) onto plane `plane` of `images` grids (nu·nv float2
/// each, consecutive): each block accumulates a (32 + W)² tile in shared memory, then adds it.
void grid_plane(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int images, int plane,
                std::uint32_t sub_begin, std::uint32_t sub_end, float2* grids);

/// Predict: acc[j] += Σ grid·φu·φv·φw(plane) for samples [begin, end), one thread each.
void degrid_plane(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int plane, std::uint32_t begin,
                  std::uint32_t end, const float2* grid, double2* acc);

/// acc[i][y][x] += Re(F_i e^{−2πi w_p t(x, y)}) for `images` transformed grids (Re F without w).
void screen_plane(cudaStream_t stream, const DeviceGeometry& g, int plane, int images, const float2* grids,
                  double* acc);

/// Predict: the whole grid = corrected model · e^{+2πi w_p t} at the image's (wrapped) cells, 0 elsewhere.
void model_to_grid(cudaStream_t stream, const DeviceGeometry& g, int plane, const double* corrected_model,
                   float2* grid);

/// images[i][y][x] *= cu[x]·cv[y]·c(t·dw) for `count` images of width × height (in place).
void apply_correction(cudaStream_t stream, const DeviceGeometry& g, const double* cu, const double* cv,
                      double* images, int count);

/// A resident channel's residual values: out[j] = data[j] − |psf[j]|·model[j] in sorted order,
/// where data = cw·V·e^{2πi|w|nshift} and psf = cw·e^{2πi|w|nshift} are the records' values and
/// model the degridder's sums (V_model·e^{2πi|w|nshift}, flipped as V): cw·(V − V_model) gridded.
/// Needs cw > 0, as every stored sample has. Double inside, float out.
void residual_values(cudaStream_t stream, std::size_t n, const float2* data, const float2* psf, const double2* model,
                     float2* out);

/// Scratch CUB needs for the sort, scan and selection of `capacity` samples (no device work).
std::size_t prep_temp_bytes(std::size_t capacity);

}  // namespace gpuclean::imaging::gpu
