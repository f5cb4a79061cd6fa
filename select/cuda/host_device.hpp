#pragma once
// GPUCLEAN_HD marks small functions that host code and CUDA kernels both call (packed peaks,
// ranking keys), so that the two sides compute the same bits.

#ifdef __CUDACC__
#define GPUCLEAN_HD __host__ __device__ __forceinline__
#else
#define GPUCLEAN_HD inline
#endif
