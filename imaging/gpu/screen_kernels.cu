// The image side of a plane (imaging-plan.md §4.1 steps 5–7, §4.4): the screen e^{∓2πi w_p t}
// between a transformed grid and the double accumulators, and the kernel corrections. Phases in
// double with sincospi (w_p·t reaches 1e2 turns); only the image's rows and columns of a grid are
// read (the corner-wrapped sub-image of invert_cpu).
#include <algorithm>

#include "imaging/gpu/es_device.cuh"
#include "imaging/gpu/gridder_device.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::imaging::gpu {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxRowsPerLaunch = 65535;  // gridDim.y; rows beyond it are strided

dim3 row_grid(int width, int height) {
  return dim3(static_cast<unsigned>((width + kThreads - 1) / kThreads),
              std::min<unsigned>(static_cast<unsigned>(height), kMaxRowsPerLaunch));
}

// Grid cell of image pixel x along an axis of n cells: wrap(x − size/2, n).
__device__ __forceinline__ int image_cell(int x, int size, int n) {
  const int c = x - size / 2;
  return c < 0 ? c + n : c;
}

template <int IMAGES>
__global__ void screen(DeviceGeometry g, int plane, const float2* grids, double* acc) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= g.width) return;
  const std::size_t cells = static_cast<std::size_t>(g.nu) * static_cast<std::size_t>(g.nv);
  const std::size_t pixels = static_cast<std::size_t>(g.width) * static_cast<std::size_t>(g.height);
  const double wp = plane_w(g, plane);
  const int gu = image_cell(x, g.width, g.nu);
  for (int y = blockIdx.y; y < g.height; y += gridDim.y) {
    const std::size_t cell = static_cast<std::size_t>(image_cell(y, g.height, g.nv)) * g.nu + gu;
    const std::size_t i = static_cast<std::size_t>(y) * g.width + x;
    double c = 1, s = 0;  // Re(F e^{−2πi w_p t}) = F.re·cos + F.im·sin
    if (g.wstacking) sincospi(2 * (wp * pixel_t(g, x, y)), &s, &c);
#pragma unroll
    for (int k = 0; k < IMAGES; ++k) {
      const float2 f = grids[k * cells + cell];
      acc[k * pixels + i] += g.wstacking ? static_cast<double>(f.x) * c + static_cast<double>(f.y) * s
                                         : static_cast<double>(f.x);
    }
  }
}

// Every grid cell: the corrected model · e^{+2πi w_p t} where it holds an image pixel, else 0.
__global__ void model_cells(DeviceGeometry g, int plane, const double* model, float2* grid) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= g.nu) return;
  const double wp = plane_w(g, plane);
  int x = u + g.width / 2;  // inverse of image_cell (width ≤ nu, so one wrap)
  if (x >= g.nu) x -= g.nu;
  for (int v = blockIdx.y; v < g.nv; v += gridDim.y) {
    int y = v + g.height / 2;
    if (y >= g.nv) y -= g.nv;
    float2 out = make_float2(0.f, 0.f);
    if (x < g.width && y < g.height) {
      const double m = model[static_cast<std::size_t>(y) * g.width + x];
      double c = 1, s = 0;
      if (g.wstacking) sincospi(2 * (wp * pixel_t(g, x, y)), &s, &c);
      out = make_float2(static_cast<float>(m * c), static_cast<float>(m * s));
    }
    grid[static_cast<std::size_t>(v) * g.nu + u] = out;
  }
}

__global__ void correct(DeviceGeometry g, const double* cu, const double* cv, double* images, int count) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= g.width) return;
  const std::size_t pixels = static_cast<std::size_t>(g.width) * static_cast<std::size_t>(g.height);
  for (int y = blockIdx.y; y < g.height; y += gridDim.y) {
    const double c = cu[x] * cv[y] * (g.wstacking ? kernel_correction(g, pixel_t(g, x, y) * g.dw) : 1.0);
    const std::size_t i = static_cast<std::size_t>(y) * g.width + x;
    for (int k = 0; k < count; ++k) images[k * pixels + i] *= c;
  }
}

}  // namespace

void screen_plane(cudaStream_t stream, const DeviceGeometry& g, int plane, int images, const float2* grids,
                  double* acc) {
  if (images == 1)
    screen<1><<<row_grid(g.width, g.height), kThreads, 0, stream>>>(g, plane, grids, acc);
  else
    screen<2><<<row_grid(g.width, g.height), kThreads, 0, stream>>>(g, plane, grids, acc);
  GPUCLEAN_CHECK_LAUNCH();
}

void model_to_grid(cudaStream_t stream, const DeviceGeometry& g, int plane, const double* corrected_model,
                   float2* grid) {
  model_cells<<<row_grid(g.nu, g.nv), kThreads, 0, stream>>>(g, plane, corrected_model, grid);
  GPUCLEAN_CHECK_LAUNCH();
}

void apply_correction(cudaStream_t stream, const DeviceGeometry& g, const double* cu, const double* cv,
                      double* images, int count) {
  correct<<<row_grid(g.width, g.height), kThreads, 0, stream>>>(g, cu, cv, images, count);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::imaging::gpu
