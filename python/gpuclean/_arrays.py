"""Which array library an input belongs to, and device views of CUDA arrays without a copy.

CuPy arrays and PyTorch tensors are used as they are; any other CUDA array (one with
``__cuda_array_interface__``, or ``__dlpack__`` on a CUDA device) is viewed through CuPy, and
results for it come back as CuPy arrays.
"""

import numpy as np

from . import _gpuclean
from .errors import RunFailure

_DLPACK_CUDA = 2  # kDLCUDA


def _module_of(x):
    return type(x).__module__.split(".")[0]


def is_cuda_array(x):
    """True for a CUDA array of any library (NumPy arrays, lists and host tensors are not)."""
    if _module_of(x) == "torch":
        return bool(x.is_cuda)
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dev = getattr(x, "__dlpack_device__", None)
    return dev is not None and dev()[0] == _DLPACK_CUDA


def to_host(x):
    """A NumPy array of `x`: itself for host data, a download for CUDA arrays."""
    if not is_cuda_array(x):
        return np.asarray(x)
    if _module_of(x) == "torch":
        return x.detach().cpu().numpy()
    return _cupy().asnumpy(_as_cupy(x))


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise TypeError("this CUDA array is neither a CuPy array nor a PyTorch tensor; gpuclean views "
                        "other CUDA arrays through CuPy, which is not installed") from e
    return cupy


def _as_cupy(x):
    cupy = _cupy()
    if isinstance(x, cupy.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return cupy.asarray(x)
    return cupy.from_dlpack(x)


def _stream_pointer(stream):
    for attr in ("ptr", "cuda_stream"):  # CuPy, PyTorch
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


class DeviceView:
    """A flat, C-ordered float32 view of a CUDA array, the caller's stream, and output allocation
    with the caller's library. Non-contiguous or non-float32 inputs are first copied on the device."""

    def __init__(self, x, cuda_stream=None):
        if _module_of(x) == "torch":
            import torch
            self.lib = "torch"
            self._torch = torch
            flat = x.detach().reshape(-1)
            if flat.dtype != torch.float32 or not flat.is_contiguous():
                flat = flat.to(torch.float32).contiguous()
            self.array = flat
            self.device = flat.device.index if flat.device.index is not None else torch.cuda.current_device()
            self.pointer = flat.data_ptr()
            default_stream = lambda: torch.cuda.current_stream(flat.device).cuda_stream
        else:
            cupy = _cupy()
            self.lib = "cupy"
            self._cupy = cupy
            flat = _as_cupy(x).ravel()
            if flat.dtype != np.float32 or not flat.flags.c_contiguous:
                flat = cupy.ascontiguousarray(flat, dtype=np.float32)
            self.array = flat
            self.device = flat.device.id
            self.pointer = flat.data.ptr
            default_stream = lambda: cupy.cuda.get_current_stream().ptr
        self.n = int(flat.size if self.lib == "cupy" else flat.numel())
        self.stream = _stream_pointer(cuda_stream) if cuda_stream is not None else default_stream()

    def empty(self, n):
        """Room for n values (float32) and n indices (32-bit) on the input's device."""
        if self.lib == "torch":
            t = self._torch
            return (t.empty(n, dtype=t.float32, device=self.array.device),
                    t.empty(n, dtype=t.int32, device=self.array.device))
        with self._cupy.cuda.Device(self.device):
            return self._cupy.empty(n, np.float32), self._cupy.empty(n, np.uint32)

    @staticmethod
    def pointer_of(a):
        return a.data_ptr() if _module_of(a) == "torch" else a.data.ptr

    def indices64(self, indices):
        """The library's 32-bit unsigned indices as int64 (torch.topk's and NumPy's index type)."""
        if self.lib == "torch":
            return indices.to(self._torch.int64) & 0xFFFFFFFF
        return indices.astype(np.int64)

    def count_valid(self):
        """Number of non-NaN elements (on the device; one number comes back)."""
        if self.lib == "torch":
            return int((~self._torch.isnan(self.array)).sum().item())
        return int((~self._cupy.isnan(self.array)).sum())


def device_image(x, cuda_stream=None):
    """(pointer, height, width, stream) of a 2-D, C-ordered float32 CUDA array, for gpuclean to read
    in place. Anything else is refused rather than copied (a copy is what this path avoids)."""
    if _module_of(x) == "torch":
        import torch
        shape, dtype, contiguous = tuple(x.shape), x.dtype, x.is_contiguous()
        float32 = dtype == torch.float32
        pointer = x.data_ptr()
        default_stream = lambda: torch.cuda.current_stream(x.device).cuda_stream
    else:
        cupy = _cupy()
        a = _as_cupy(x)
        shape, dtype, contiguous = a.shape, a.dtype, a.flags.c_contiguous
        float32 = dtype == np.float32
        pointer = a.data.ptr
        default_stream = lambda: cupy.cuda.get_current_stream().ptr
    if len(shape) != 2:
        raise ValueError(f"images must be 2-D arrays (height, width); this CUDA array has shape {shape}")
    if not float32:
        raise ValueError(f"a CUDA dirty image must be float32, not {dtype}: convert it on the device first "
                         "(CuPy: x.astype(cupy.float32); PyTorch: x.float())")
    if not contiguous:
        raise ValueError("a CUDA dirty image must be C-contiguous (row-major): make it so on the device first "
                         "(CuPy: cupy.ascontiguousarray(x); PyTorch: x.contiguous())")
    stream = _stream_pointer(cuda_stream) if cuda_stream is not None else default_stream()
    return int(pointer), int(shape[0]), int(shape[1]), int(stream)


def device_view(x, cuda_stream=None):
    """A DeviceView of `x`, or None when `x` is host data."""
    if not is_cuda_array(x):
        return None
    if not _gpuclean.built_with_cuda:
        raise RunFailure("this gpuclean was built without CUDA, so it cannot select on CUDA arrays; rebuild it "
                         "with nvcc, or pass NumPy arrays")
    return DeviceView(x, cuda_stream)
