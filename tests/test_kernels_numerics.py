"""The smoother kernels compute what the PyTorch stages compute, forward and backward.

Every test runs twice: on "host", where the .cu sources are compiled as C++ for the CPU and every
(block, thread) of a small grid runs in turn (this checks the kernels' indexing, the autograd Functions and
the dispatch glue on any machine with g++), and on "cuda" (marked gpu), where CuPy compiles and launches
the same sources. Outputs are poisoned with NaN before each launch, so an element a kernel never writes fails.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest
import torch

import kernels
from forecaster.nn import smoother as torch_stages
from kernels import runtime
from kernels.runtime import Launch

HOST_SHIM = """
struct EmulatedDim { unsigned x, y, z; };
static EmulatedDim threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
extern "C" void emulate_thread(unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_index_x,
                               unsigned block_index_y, unsigned thread_x) {
  gridDim = {grid_x, grid_y, 1};
  blockDim = {block_x, 1, 1};
  blockIdx = {block_index_x, block_index_y, 0};
  threadIdx = {thread_x, 0, 0};
}
#define __global__
#define __device__
#define __forceinline__ inline
"""
# A grid much smaller than the work, so every grid-stride loop wraps; two y slices where a kernel has them.
HOST_GRID_X, HOST_BLOCK, HOST_GRID_Y = 3, 4, 2

# (batch, seq_len, d_model, fold): odd lengths, d_model not divisible by 32, fold 1 and fold = d_model.
SHAPES = [(3, 97, 40, 8), (2, 33, 12, 3), (2, 64, 64, 8), (1, 15, 6, 1), (2, 8, 5, 5)]
GRAD_SHAPES = [(2, 7, 6, 3), (1, 6, 4, 4)]


# The C type of each parameter kind of runtime.KERNELS, for calling the host build through ctypes.
CTYPES = {"in": ctypes.c_void_p, "out": ctypes.c_void_p, "i64": ctypes.c_longlong, "i32": ctypes.c_int}


@pytest.fixture(scope="session")
def host_library(tmp_path_factory) -> ctypes.CDLL:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ not found: the host emulation of the kernels needs a C++ compiler")
    includes = "".join(f'#include "{runtime.source_path(source)}"\n' for source in runtime.KERNELS)
    library = tmp_path_factory.mktemp("host_kernels") / "kernels_host.so"
    command = [compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-x", "c++", "-", "-o", str(library)]
    subprocess.run(command, input=HOST_SHIM + includes, text=True, check=True, capture_output=True)
    return ctypes.CDLL(str(library))


def _poison(call: Launch) -> None:
    """Fill every tensor the kernel writes with NaN, so elements it skips show up."""
    if call.work > 0 and call.slices > 0:
        for kind, argument in zip(call.parameters, call.args, strict=True):
            if kind == "out":
                argument.fill_(float("nan"))


@pytest.fixture(params=["host", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request, monkeypatch) -> torch.device:
    """The device the kernels run on; runtime.launch is wrapped to poison outputs (and emulated on "host")."""
    if request.param == "cuda":
        if not kernels.cupy_available():
            pytest.skip("CuPy with a CUDA device is needed for the kernel path")
        real_launch = runtime.launch

        def poisoned_launch(call: Launch) -> None:
            runtime.check_arguments(call)
            _poison(call)
            real_launch(call)

        monkeypatch.setattr(runtime, "launch", poisoned_launch)
        return torch.device("cuda")
    library = request.getfixturevalue("host_library")

    def host_launch(call: Launch) -> None:
        runtime.check_arguments(call)
        _poison(call)
        if call.work <= 0 or call.slices <= 0:
            return
        kernel = getattr(library, call.entry)
        kernel.argtypes = [CTYPES[kind] for kind in call.parameters]
        arguments = [arg.data_ptr() if isinstance(arg, torch.Tensor) else int(arg) for arg in call.args]
        grid_y = min(call.slices, HOST_GRID_Y)
        for block_y in range(grid_y):
            for block_x in range(HOST_GRID_X):
                for thread in range(HOST_BLOCK):
                    library.emulate_thread(HOST_GRID_X, grid_y, HOST_BLOCK, block_x, block_y, thread)
                    kernel(*arguments)

    monkeypatch.setattr(runtime, "launch", host_launch)
    return torch.device("cpu")


def _assert_close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """float32: 1e-5 relative to the tensor's scale; float64: 1e-12."""
    tolerance = 1e-5 if expected.dtype in (torch.float32, torch.complex64) else 1e-12
    scale = float(expected.abs().max()) if expected.numel() else 0.0
    assert not torch.isnan(actual).any(), "an output element was never written"
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance * scale)


def _inputs(shape, dtype, device, generator_seed=0):
    batch, seq_len, d_model, fold = shape
    generator = torch.Generator().manual_seed(generator_seed)
    x = torch.randn(batch, seq_len, d_model, generator=generator, dtype=dtype).to(device)
    weight = torch.randn(seq_len // 2 + 1, d_model, 2, generator=generator, dtype=dtype).to(device)
    return x, torch.view_as_complex(weight), fold


def _value_and_grads(stage, fold, *inputs):
    """stage(*inputs, fold) and the gradients of its inputs under a fixed random upstream gradient."""
    leaves = [tensor.clone().requires_grad_() for tensor in inputs]
    out = stage(*leaves, fold)
    upstream = torch.randn(out.shape, generator=torch.Generator().manual_seed(1), dtype=out.dtype)
    return (out.detach(), *torch.autograd.grad(out, leaves, upstream.to(out.device)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_stages_forward_and_backward_match_pytorch(device, shape, dtype):
    x, weight, fold = _inputs(shape, dtype, device)
    spectrum = torch.fft.rfft(torch_stages.segment_average(x, fold), dim=-2)
    stages = {"segment_average": (x,), "filter_groups": (spectrum, weight), "fourier_smooth": (x, weight)}
    for name, inputs in stages.items():
        kernel_results = _value_and_grads(getattr(kernels, name), fold, *inputs)
        torch_results = _value_and_grads(getattr(torch_stages, name), fold, *inputs)
        for kernel_value, torch_value in zip(kernel_results, torch_results, strict=True):
            _assert_close(kernel_value, torch_value)


def test_leading_dimensions_and_only_one_input_needing_grad(device):
    x, weight, fold = _inputs((2, 10, 12, 4), torch.float64, device)
    x4 = x.reshape(1, 2, 10, 12)
    _assert_close(kernels.segment_average(x4, fold), torch_stages.segment_average(x4, fold))
    spectrum = torch.fft.rfft(torch_stages.segment_average(x4, fold), dim=-2).requires_grad_()
    out = kernels.filter_groups(spectrum, weight, fold)
    (grad,) = torch.autograd.grad(out.abs().sum(), spectrum)
    reference = torch_stages.filter_groups(spectrum, weight, fold)
    (expected,) = torch.autograd.grad(reference.abs().sum(), spectrum)
    _assert_close(grad, expected)


@pytest.mark.parametrize("shape", GRAD_SHAPES)
def test_float64_gradcheck(device, shape):
    x, weight, fold = _inputs(shape, torch.float64, device)
    x.requires_grad_()
    weight = weight.clone().requires_grad_()
    spectrum = torch.fft.rfft(x.detach(), dim=-2)[..., :fold].clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: kernels.segment_average(t, fold), (x,))
    assert torch.autograd.gradcheck(lambda s, w: kernels.filter_groups(s, w, fold), (spectrum, weight))


@pytest.mark.parametrize("seq_len", [5, 6])  # the irFFT gradient doubles different bins for odd and even
def test_float64_gradcheck_of_the_whole_fourier_part(device, seq_len):
    x, weight, fold = _inputs((1, seq_len, 4, 2), torch.float64, device)
    x.requires_grad_()
    weight = weight.clone().requires_grad_()
    # Full Jacobians on CUDA; on the host, torch's CPU FFTs make a full check slow, so a random projection.
    def smooth(t, w):
        return kernels.fourier_smooth(t, w, fold)

    assert torch.autograd.gradcheck(smooth, (x, weight), fast_mode=device.type == "cpu")


def test_smoother_module_kernel_path_matches_pytorch_path(device, monkeypatch):
    torch.manual_seed(0)
    module = torch_stages.Smoother(d_model=24, seq_len=31, fold=4).to(device)
    x = torch.randn(3, 31, 24, device=device)
    results = {}
    for backend in ("kernels", "torch"):
        monkeypatch.setattr(torch_stages, "smoother_backend", lambda *_, chosen=backend: chosen)
        module.zero_grad()
        x_leaf = x.clone().requires_grad_()
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False):
            out = module(x_leaf)
            out.square().sum().backward()
        results[backend] = (out.detach(), x_leaf.grad, module.spectral_weight.grad.clone())
    for kernel_value, torch_value in zip(results["kernels"], results["torch"], strict=True):
        _assert_close(kernel_value, torch_value)


def test_kernels_follow_the_current_stream(device):
    if device.type != "cuda":
        pytest.skip("streams exist only on CUDA")
    x, weight, fold = _inputs((4, 257, 72, 8), torch.float32, device)
    expected = torch_stages.fourier_smooth(x, weight, fold)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = kernels.fourier_smooth(x, weight, fold)
    torch.cuda.current_stream().wait_stream(stream)
    _assert_close(out, expected)


def test_the_fourier_operator_passes_torch_library_opcheck(device):
    """Schema, fake implementation (shapes and strides of the real outputs) and autograd registration."""
    from kernels.functions import _fourier_smooth

    x, weight, fold = _inputs((2, 6, 4, 2), torch.float64, device)
    torch.library.opcheck(_fourier_smooth, (x.requires_grad_(), weight.clone().requires_grad_(), fold))


@pytest.mark.gpu
def test_torch_compile_and_graph_capture_run_through_the_kernel_path(monkeypatch):
    if not kernels.cupy_available():
        pytest.skip("CuPy with a CUDA device is needed for the kernel path")
    monkeypatch.setenv("FORECASTER_KERNELS", "on")
    torch.manual_seed(0)
    module = torch_stages.Smoother(d_model=64, seq_len=256, fold=8).cuda()
    x = torch.randn(4, 256, 64, device="cuda")
    expected = module(x)
    compiled = torch.compile(module, fullgraph=True)
    _assert_close(compiled(x), expected)
    static = x.clone()
    graph = torch.cuda.CUDAGraph()
    module(static)  # warm-up outside the capture
    with torch.cuda.graph(graph):
        captured = module(static)
    static.copy_(x)
    graph.replay()
    _assert_close(captured, expected)


@pytest.mark.parametrize("needed", ["x", "weight"])
def test_the_fourier_operator_computes_only_the_gradient_asked_for(device, needed):
    x, weight, fold = _inputs((2, 9, 6, 3), torch.float64, device)
    results = {}
    for name, stage in (("kernels", kernels.fourier_smooth), ("torch", torch_stages.fourier_smooth)):
        leaves = {"x": x.clone(), "weight": weight.clone()}
        leaves[needed].requires_grad_()
        out = stage(leaves["x"], leaves["weight"], fold)
        (results[name],) = torch.autograd.grad(out.square().sum(), leaves[needed])
    _assert_close(results["kernels"], results["torch"])
