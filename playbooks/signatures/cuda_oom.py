"""CUDA and library out-of-memory errors in their many spellings: all ``training.cuda_oom``.

Only PyTorch's own allocator message carries figures (who holds the memory); the library spellings say
no more than "an allocation on the GPU failed", so they are medium confidence and the detail asks for
nvidia-smi. Host-memory failures (cuDNN 9 ``..._HOST_ALLOCATION_FAILED``, ``DefaultCPUAllocator``) are not
GPU OOMs and are left out.

Sources:
- pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (2.1 to 2.11): ``torch.OutOfMemoryError: CUDA out of
  memory. Tried to allocate X. GPU N has a total capacity of ... of which ... is free. Including non-PyTorch
  memory, this process has ... memory in use.`` (``Process P has X memory in use`` per other process);
  before 2.1 ``(GPU 0; X total capacity; Y already allocated; Z free; W reserved in total by PyTorch)``
  (rule torch.cuda_oom).
- pytorch/pytorch c10/cuda/CUDAMallocAsyncAllocator.cpp (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync):
  ``Allocation on device N would exceed allowed memory. (out of memory)`` (rule torch.allocation_limit).
- pytorch/pytorch c10/cuda/CUDAException.h ``C10_CUDA_CHECK``: ``CUDA error: out of memory``
  (cudaGetErrorString of cudaErrorMemoryAllocation; ``torch.AcceleratorError`` since 2.8, RuntimeError
  before) and ``C10_CUDA_DRIVER_CHECK``: ``CUDA driver error: out of memory`` (expandable segments)
  (rule cuda.error_oom).
- pytorch/pytorch aten/src/ATen/cuda/Exceptions.h ``TORCH_CUDABLAS_CHECK``: ``CUDA error:
  CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)``` (rule cublas.alloc_failed).
- pytorch/pytorch aten/src/ATen/cudnn/Exceptions.h ``AT_CUDNN_CHECK``: ``cuDNN error: <cudnnGetErrorString>``;
  cuDNN <= 8 names it ``CUDNN_STATUS_ALLOC_FAILED``, cuDNN 9 ``CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED``
  (cudnn_graph.h; ``ALLOC_FAILED`` stays as a deprecated alias) (rule cudnn.alloc_failed).
- CUDA runtime / driver error names as cudaGetErrorName / cuGetErrorName print them (CuPy, CUB, JAX/XLA,
  TensorRT): ``cudaErrorMemoryAllocation``, ``CUDA_ERROR_OUT_OF_MEMORY`` (rule cuda.memory_allocation).
- NVIDIA/nccl src/include/checks.h ``CUDACHECK``: ``NCCL WARN Cuda failure 'out of memory'``;
  src/include/cudawrap.h ``CUCHECK`` (2.19+): ``NCCL WARN Cuda failure 2 'out of memory'``; src/include/alloc.h:
  ``Failed to CUDA malloc %ld bytes`` / ``Failed to CUDA calloc %ld bytes`` (2.28). ``CUDACHECKIGNORE`` logs the
  same text at INFO and carries on, so INFO lines are ignored (rule nccl.cuda_oom).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_SIZE = r"[\d.]{1,12} [KMGTP]?i?B"
_OTHER_PROCESS = linear.compile(rf"Process (?P<pid>\d+) has (?P<mem>{_SIZE}) memory in use")


def _torch_oom(fields: dict[str, str], text: str) -> Verdict:
    others = [f"{m.group('pid')}={m.group('mem')}" for m in _OTHER_PROCESS.finditer(text)]
    return Verdict(fields={"other_processes": "; ".join(others)} if others else {})


def _nccl_oom(fields: dict[str, str], text: str) -> Verdict | None:
    if "NCCL INFO" in text:
        return None  # CUDACHECKIGNORE: NCCL cleared the error and went on
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="torch.cuda_oom",
        code="training.cuda_oom",
        severity="error",
        confidence="high",
        title="CUDA out of memory[ on GPU {gpu}]: tried to allocate {tried}[ with {free} free of {total}]",
        keywords=("CUDA out of memory",),
        pattern=linear.compile(rf"Tried to allocate (?P<tried>{_SIZE})"),
        extract=(
            linear.compile(rf"GPU (?P<gpu>\d+) has a total capacity of (?P<total>{_SIZE}) of which (?P<free>{_SIZE}) is free"),
            linear.compile(rf"this process has (?P<process>{_SIZE}) memory in use"),
            linear.compile(rf"Of the allocated memory (?P<allocated>{_SIZE}) is allocated by PyTorch, and (?P<reserved_unallocated>{_SIZE}) is reserved"),
            # PyTorch < 2.1: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 4.75 MiB free; 14.71 GiB reserved in total by PyTorch)"
            linear.compile(rf"\(GPU (?P<gpu>\d+); (?P<total>{_SIZE}) total capacity; (?P<allocated>{_SIZE}) already allocated; (?P<free>{_SIZE}) free;(?: {_SIZE} allowed;)? (?P<reserved_total>{_SIZE}) reserved in total"),
        ),
        refine=_torch_oom,
        fields_doc="tried, gpu, total, free, process (this process in use), allocated, reserved_unallocated; older PyTorch: reserved_total instead of process; other_processes (pid=size; ...)",
        example="[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 8.38 GiB memory in use. Of the allocated memory 7.96 GiB is allocated by PyTorch, and 7.73 MiB is reserved by PyTorch but unallocated.",
    ),
    Rule(
        name="torch.allocation_limit",
        code="training.cuda_oom",
        severity="error",
        confidence="high",
        title="CUDA out of memory on GPU {gpu}: the allocation would exceed the memory allowed to this process",
        keywords=("would exceed allowed memory",),
        pattern=linear.compile(r"Allocation on device (?P<gpu>\d{1,3}) would exceed allowed memory"),
        fields_doc="gpu",
        example="torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
    ),
    Rule(
        name="cuda.error_oom",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="CUDA error: out of memory (no allocator figures in the message)",
        keywords=("CUDA error: out of memory", "CUDA driver error: out of memory"),
        fields_doc="(none)",
        example="RuntimeError: CUDA error: out of memory",
    ),
    Rule(
        name="cublas.alloc_failed",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="cuBLAS could not allocate GPU memory (CUBLAS_STATUS_ALLOC_FAILED[ in {call}]): the GPU is out of memory",
        keywords=("CUBLAS_STATUS_ALLOC_FAILED",),
        extract=(linear.compile(r"when calling `(?P<call>\w{1,60})"),),
        fields_doc="call (cublasCreate, cublasLtMatmul, ...)",
        example="RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    ),
    Rule(
        name="cudnn.alloc_failed",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="cuDNN could not allocate GPU memory ({status}): the GPU is out of memory",
        keywords=("CUDNN_STATUS_ALLOC_FAILED", "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
        pattern=linear.compile(r"(?P<status>CUDNN_STATUS_ALLOC_FAILED|CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)"),
        fields_doc="status (the cuDNN status name)",
        example="RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
    ),
    Rule(
        name="cuda.memory_allocation",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="CUDA could not allocate GPU memory ({status})",
        keywords=("cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"),
        pattern=linear.compile(r"(?P<status>cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY)"),
        fields_doc="status (the CUDA error name)",
        example="cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory",
    ),
    Rule(
        name="nccl.cuda_oom",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="NCCL could not allocate GPU memory for its buffers[ ({nccl_bytes} bytes)]: the GPU is out of memory",
        keywords=("Cuda failure 'out of memory'", "Cuda failure 2 'out of memory'", "Failed to CUDA malloc", "Failed to CUDA calloc"),
        extract=(linear.compile(r"Failed to CUDA (?:malloc|calloc)(?: async)? (?P<nccl_bytes>\d{1,15}) bytes"),),
        refine=_nccl_oom,
        fields_doc="nccl_bytes (the failed allocation)",
        example="ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'out of memory'",
    ),
)
