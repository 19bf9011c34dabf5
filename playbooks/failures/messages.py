"""PyTorch's own words for two classes of failure its CUDA and NCCL tables do not name: a process that
sees no usable GPU, and numbers that stopped being numbers.

No GPU (training.gpu_not_visible), from pytorch/pytorch:
- c10/cuda/CUDAFunctions.cpp ``device_count_impl``: ``No CUDA GPUs are available`` (cudaErrorNoDevice once
  the runtime is up), ``Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and
  installed a driver from http://www.nvidia.com/Download/index.aspx`` (cudaErrorInsufficientDriver with no
  driver at all), ``The NVIDIA driver on your system is too old (found version %d)``, ``CUDA unknown error -
  this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after
  program start`` (cudaErrorUnknown at initialisation).
- torch/serialization.py ``_validate_device``: ``Attempting to deserialize object on a CUDA device but
  torch.cuda.is_available() is False``.
- torch/cuda/__init__.py ``_lazy_init``: ``Torch not compiled with CUDA enabled`` (a CPU-only build of
  PyTorch in the image: the image's fault, not the pod's).

Numbers (training.numerical), from pytorch/pytorch:
- torch/csrc/autograd/engine.cpp ``validate_outputs`` under anomaly mode: ``Function 'LogBackward0' returned
  nan values in its 0th output.``
- torch/nn/utils/clip_grad.py ``clip_grad_norm_(error_if_nonfinite=True)``: ``The total norm of order %s for
  gradients from `parameters` is non-finite, so it cannot be clipped.``
- torch/distributions/distribution.py ``_validate_sample`` / ``__init__``: ``Expected parameter %s (...) of
  distribution %s to satisfy the constraint %s, but found invalid values`` (NaN parameters).
- The loss printed as NaN / Inf by the trainers' own loggers (Hugging Face Trainer ``{'loss': nan, ...}``,
  Lightning ``loss=nan``) and the checks training scripts raise (``Loss is nan``): read as the same thing.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Hit

KEYWORDS: tuple[str, ...] = (
    "No CUDA GPUs are available", "Found no NVIDIA driver", "NVIDIA driver on your system is too old",
    "CUDA unknown error", "torch.cuda.is_available() is False", "Torch not compiled with CUDA enabled",
    "nan values in its", "is non-finite, so it cannot be clipped", "but found invalid values",
    "oss is nan", "oss is NaN", "oss is inf", "oss became nan", "'loss': nan", "\"loss\": NaN", "\"loss\": nan",
    "loss=nan", "loss: nan", "'grad_norm': nan", "grad_norm=nan",
    "Out of memory while trying to allocate",
)

_NO_GPU = (
    ("No CUDA GPUs are available", "high",
     "The process sees no GPU: the container has no nvidia.com/gpu limit, or CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES hide them"),
    ("Found no NVIDIA driver", "high",
     "No NVIDIA driver is visible to the process: the pod landed on a node without the GPU driver, or requested no GPU"),
    ("NVIDIA driver on your system is too old", "high",
     "The node's NVIDIA driver is older than the CUDA runtime in the image: use an image built for this driver, or a newer AMI"),
    ("CUDA unknown error", "medium",
     "CUDA could not initialise (cudaErrorUnknown): CUDA_VISIBLE_DEVICES changed after start, or the device nodes are missing in the container"),
    ("torch.cuda.is_available() is False", "high",
     "A checkpoint saved on GPU is loaded where no GPU is visible: map_location='cpu', or give the pod its nvidia.com/gpu"),
)
_CPU_BUILD = "Torch not compiled with CUDA enabled"
# XLA's BFC allocator (openxla/xla xla/tsl/framework/bfc_allocator.cc): ``Out of memory while trying to
# allocate %s`` behind ``RESOURCE_EXHAUSTED``; on a GPU allocator (``GPU_0_bfc``) it is JAX's CUDA OOM.
_XLA_OOM = linear.compile(r"RESOURCE_EXHAUSTED: Out of memory while trying to allocate (?P<tried>[\d.]{1,20} ?[KMGT]?i?B)(?: with allocator GPU_\d{1,3}_bfc)?")

_NAN_BACKWARD = linear.compile(r"Function '(?P<function>\w{1,100})' returned nan values in its (?P<output>\d{1,3})(?:st|nd|rd|th) output")
_NONFINITE_NORM = linear.compile(r"The total norm of order (?P<order>[\w.-]{1,20}) for gradients from `parameters` is non-finite")
_INVALID_PARAMETER = linear.compile(r"Expected parameter (?P<parameter>\w{1,60}) .{0,400}of distribution (?P<distribution>\w{1,60}).{0,400}but found invalid values")
_LOSS_NAN = linear.compile(
    r"(?i:\b(?P<quantity>loss|grad_norm)\b['\"]?\s?(?:is|became|=|:)\s?(?P<value>[-+]?(?:nan|inf))\b)")


def classify(text: str) -> Hit | None:
    for marker, confidence, title in _NO_GPU:
        if marker in text:
            return Hit("training.gpu_not_visible", "error", confidence, title, {"problem": marker, "error_class": "environment"})
    found = _XLA_OOM.search(text)
    if found is not None and "GPU_" in text:
        return Hit("training.cuda_oom", "error", "high",
                   f"JAX / XLA ran out of GPU memory trying to allocate {found.group('tried')}",
                   {"tried": found.group("tried")})
    if _CPU_BUILD in text:
        return Hit("training.failed", "error", "low",
                   "The image's PyTorch is a CPU-only build (Torch not compiled with CUDA enabled): install a CUDA build of torch in the image",
                   {"problem": _CPU_BUILD, "error_class": "image"})
    found = _NAN_BACKWARD.search(text)
    if found is not None:
        return Hit("training.numerical", "error", "high",
                   f"Autograd found NaN in the gradient of {found.group('function')}: the loss or an operation produced NaN (code or data, not the GPU)",
                   {"function": found.group("function"), "quantity": "gradient", "value": "nan"})
    found = _NONFINITE_NORM.search(text)
    if found is not None:
        return Hit("training.numerical", "error", "high",
                   "The gradient norm is NaN or Inf (clip_grad_norm_ refused to clip): the loss diverged or overflowed",
                   {"quantity": "gradient norm", "value": "non-finite"})
    found = _INVALID_PARAMETER.search(text)
    if found is not None:
        return Hit("training.numerical", "error", "medium",
                   f"The {found.group('distribution')} distribution got NaN parameters ({found.group('parameter')}): the network's outputs became NaN",
                   {"quantity": found.group("parameter"), "value": "nan"})
    found = _LOSS_NAN.search(text)
    if found is not None:
        quantity, value = found.group("quantity").lower(), found.group("value").lower()
        return Hit("training.numerical", "error", "medium",
                   f"The {quantity.replace('_', ' ')} is {value}: training diverged (learning rate, data, fp16 overflow), not a GPU fault",
                   {"quantity": quantity, "value": value})
    return None
