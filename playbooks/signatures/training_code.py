"""The training code or its data failed, not the GPU: CUDA device-side asserts, indices and labels out of
range, shape mismatches. These are never hardware findings, whatever CUDA calls them.

Sources (pytorch/pytorch, 2.x):
- c10/cuda/CUDAException.cpp ``c10_cuda_check_implementation``: ``CUDA error: <cudaGetErrorString>`` plus
  "CUDA kernel errors might be asynchronously reported ..."; cudaErrorAssert reads ``device-side assert
  triggered``.
- aten/src/ATen/native/cuda/Indexing.cu ``indexSelectSmallIndex`` / ``indexSelectLargeIndex``:
  ``CUDA_KERNEL_ASSERT(srcIndex < srcSelectDimSize)`` (embedding / index_select with a token id >= rows);
  the device prints ``<file>.cu:<line>: <kernel>: block: [x,y,z], thread: [x,y,z] Assertion `<expr>` failed.``
- aten/src/ATen/native/cuda/Loss.cu and NLLLoss2d.cu: ``CUDA_KERNEL_ASSERT(t >= 0 && t < n_classes)``
  (a class label outside [0, n_classes)); Loss.cu binary_cross_entropy ``input_val >= zero && input_val <= one``.
- aten/src/ATen/native/TensorAdvancedIndexing.cpp ``index_select_out_cpu_``: ``index out of range in self``
  (torch.nn.functional.embedding on CPU raises it as IndexError); aten/src/ATen/native/LossNLL.cpp
  ``Target %ld is out of bounds.`` and ``Expected input batch_size (%d) to match target batch_size (%d).``
- aten/src/ATen/native/LinearAlgebra.cpp (addmm / linear): ``mat1 and mat2 shapes cannot be multiplied
  (AxB and CxD)``; aten/src/ATen/ExpandUtils.cpp ``The size of tensor a (X) must match the size of tensor b (Y)
  at non-singleton dimension Z``; aten/src/ATen/InferSize.h ``shape '[...]' is invalid for input of size N``.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

# What each kernel assertion of PyTorch means for the job's data.
ASSERTIONS = {
    "srcIndex < srcSelectDimSize": "an index (usually a token id) is >= the rows of the embedding / indexed tensor",
    "t >= 0 && t < n_classes": "a class label is negative or >= the number of classes",
    "input_val >= zero && input_val <= one": "binary_cross_entropy got an input outside [0, 1] (apply sigmoid or use BCEWithLogitsLoss)",
    "index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"": "an advanced index is out of bounds",
}


def _assertion(fields: dict[str, str], text: str) -> Verdict:
    meaning = ASSERTIONS.get(fields.get("assertion", ""))
    if meaning:
        return Verdict(fields={"meaning": meaning})
    return Verdict(confidence="medium")


RULES: tuple[Rule, ...] = (
    Rule(
        name="cuda.kernel_assertion",
        code="training.code_error",
        severity="error",
        confidence="high",
        title="CUDA kernel assertion failed in the training code: {assertion}",
        keywords=("] Assertion `",),
        pattern=linear.compile(r"(?:(?P<kernel>\w{1,80}): )?block: \[[\d,]{1,40}\], thread: \[[\d,]{1,40}\] Assertion `(?P<assertion>[^`]{1,200})` failed"),
        refine=_assertion,
        fields_doc="kernel, assertion, meaning",
        example="/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [226,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
    ),
    Rule(
        name="cuda.device_assert",
        code="training.code_error",
        severity="error",
        confidence="high",
        title="CUDA device-side assert triggered: the training code or its data, not the GPU",
        keywords=("device-side assert triggered",),
        fields_doc="(none)",
        example="torch.AcceleratorError: CUDA error: device-side assert triggered",
    ),
    Rule(
        name="torch.index_error",
        code="training.code_error",
        severity="error",
        confidence="high",
        title="Index out of range in the training code[ (target {target})]",
        keywords=("index out of range in self", "is out of bounds."),
        pattern=linear.compile(r"index out of range in self|Target (?P<target>-?\d{1,12}) is out of bounds\."),
        fields_doc="target (the label, for nll_loss / cross_entropy)",
        example="IndexError: index out of range in self",
    ),
    Rule(
        name="torch.shape_mismatch",
        code="training.code_error",
        severity="error",
        confidence="high",
        title="Tensor shape mismatch in the training code[ ({shapes})]",
        keywords=("shapes cannot be multiplied", "must match the size of tensor", "is invalid for input of size", "to match target batch_size"),
        pattern=linear.compile(
            r"mat1 and mat2 shapes cannot be multiplied \((?P<shapes>\d{1,12}x\d{1,12} and \d{1,12}x\d{1,12})\)"
            r"|The size of tensor a \(\d{1,12}\) must match the size of tensor b \(\d{1,12}\)"
            r"|shape '\[[-\d, ]{1,200}\]' is invalid for input of size \d{1,15}"
            r"|Expected input batch_size \(\d{1,12}\) to match target batch_size \(\d{1,12}\)"
        ),
        fields_doc="shapes (matmul operands)",
        example="RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x4096 and 1024x4096)",
    ),
)
