"""The failure cases `capture.py` runs on a machine with a GPU.

Each case is a short program (or a torchrun launch of one) that fails the way jobs fail in the field:
the output it prints is kept verbatim as a fixture under tests/fixtures/text/gpu/, headed by the
command and this program, so that every fixture says how it was made. Rules are never derived from
these texts' wording: they come from upstream's tables (see playbooks/failures/tables/); the fixtures
check that real output reaches them.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    program: str
    # "python" runs the program directly; "torchrun:N" launches it with torchrun --nproc-per-node N.
    launcher: str = "python"
    env: dict[str, str] = field(default_factory=dict)
    launcher_args: tuple[str, ...] = ()


TRITON_WILD_STORE = '''
import torch, triton, triton.language as tl

@triton.jit
def wild(ptr):
    # An address far outside any allocation: the store faults on the device.
    bad = ptr + 0x7ffffffff000
    tl.store(bad, 1.0)

x = torch.zeros(16, device="cuda")
wild[(1,)](x)
torch.cuda.synchronize()
print("unreachable")
'''

CASES: list[Case] = [
    Case("cuda_illegal_address", "a Triton kernel stores through a wild pointer", TRITON_WILD_STORE),
    Case("cuda_device_assert", "index out of range on the GPU (device-side assert)", '''
import torch
x = torch.zeros(10, device="cuda")
i = torch.tensor([20], device="cuda")
print(x[i])
'''),
    Case("cuda_oom", "allocation larger than the GPU's memory", '''
import torch
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total * 1.5) // 4, dtype=torch.float32, device="cuda")
'''),
    Case("cuda_no_gpus", "CUDA_VISIBLE_DEVICES is empty (the pod got no GPU)", '''
import torch
x = torch.zeros(1, device="cuda")
''', env={"CUDA_VISIBLE_DEVICES": ""}),
    Case("cuda_invalid_ordinal", "a device index beyond the visible GPUs", '''
import torch
torch.cuda.set_device(3)
x = torch.zeros(1, device="cuda")
'''),
    Case("cuda_visible_bad", "CUDA_VISIBLE_DEVICES names a GPU uuid that does not exist", '''
import torch
print(torch.cuda.is_available(), torch.cuda.device_count())
x = torch.zeros(1, device="cuda")
''', env={"CUDA_VISIBLE_DEVICES": "GPU-00000000-dead-beef-0000-000000000000"}),
    Case("torchrun_invalid_ordinal", "torchrun starts 2 ranks on 1 GPU; rank 1 sets device 1", '''
import os, time, torch, torch.distributed as dist
rank = int(os.environ["LOCAL_RANK"])
if rank == 0:
    time.sleep(30)  # a healthy rank: torchrun ends it once rank 1 fails
torch.cuda.set_device(rank)
x = torch.ones(1, device="cuda")
''', launcher="torchrun:2"),
    Case("torchrun_value_error_record", "rank 1 raises in code wrapped in @record (error file)", '''
import os, time
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    rank = int(os.environ["RANK"])
    if rank == 1:
        cfg = {"lr": "3e-4x"}
        float(cfg["lr"])
    time.sleep(30)

main()
''', launcher="torchrun:2"),
    Case("torchrun_module_missing", "the image lacks a module the trainer imports", '''
import os
import flash_attn_interface_missing_module
''', launcher="torchrun:2"),
    Case("torchrun_sigkill", "rank 1 is killed with SIGKILL (as the OOM killer does)", '''
import os, signal, time
if os.environ["RANK"] == "1":
    time.sleep(1)
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(30)
''', launcher="torchrun:2"),
    Case("torchrun_sigsegv", "rank 0 dereferences NULL in native code", '''
import ctypes, os, time
if os.environ["RANK"] == "0":
    time.sleep(1)
    ctypes.string_at(0)
time.sleep(30)
''', launcher="torchrun:2"),
    Case("torchrun_sigabrt", "rank 1 aborts (as a failed C++ check does)", '''
import os, time
if os.environ["RANK"] == "1":
    time.sleep(1)
    os.abort()
time.sleep(30)
''', launcher="torchrun:2"),
    Case("torchrun_sigbus", "rank 0 gets SIGBUS (as a truncated mmap or full /dev/shm gives)", '''
import os, time
if os.environ["RANK"] == "0":
    time.sleep(1)
    import signal
    os.kill(os.getpid(), signal.SIGBUS)
time.sleep(30)
''', launcher="torchrun:2"),
    Case("torchrun_agent_sigterm", "the torchrun agent is sent SIGTERM from outside (pod deletion)", '''
import os, signal, time
if os.environ["RANK"] == "0":
    time.sleep(2)
    os.kill(os.getppid(), signal.SIGTERM)
time.sleep(30)
''', launcher="torchrun:2"),
    Case("torchrun_rdzv_timeout", "torchrun waits for a second node that never comes", '''
print("never started")
''', launcher="torchrun:1", launcher_args=("--nnodes", "2", "--rdzv-backend", "c10d",
                                             "--rdzv-endpoint", "localhost:29611",
                                             "--rdzv-conf", "join_timeout=15")),
    Case("dataloader_worker_sigkill", "a DataLoader worker is killed by SIGKILL", '''
import os, signal, torch
from torch.utils.data import DataLoader, Dataset

class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.zeros(4)

for b in DataLoader(D(), batch_size=4, num_workers=2):
    pass
'''),
    Case("dataloader_worker_sigbus", "a DataLoader worker gets SIGBUS (shared memory exhausted)", '''
import os, signal, torch
from torch.utils.data import DataLoader, Dataset

class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        if i == 9:
            os.kill(os.getpid(), signal.SIGBUS)
        return torch.zeros(4)

for b in DataLoader(D(), batch_size=4, num_workers=2):
    pass
'''),
    Case("dataloader_worker_exception", "a DataLoader worker raises on a corrupt sample", '''
import json, torch
from torch.utils.data import DataLoader, Dataset

class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        line = '{"text": "ok"}' if i != 7 else '{"text": "tru'
        return len(json.loads(line)["text"])

for b in DataLoader(D(), batch_size=4, num_workers=2):
    pass
'''),
    Case("nccl_duplicate_gpu", "two NCCL ranks on one GPU", '''
import os, torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
t = torch.ones(1, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
''', launcher="torchrun:2", env={"NCCL_DEBUG": "WARN"}),
    Case("nccl_bad_ifname", "NCCL_SOCKET_IFNAME names an interface the pod lacks", '''
import torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
t = torch.ones(1, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
''', launcher="torchrun:1", env={"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "efa9"}),
    Case("nccl_net_missing", "NCCL_NET forces a network plugin the image lacks", '''
import torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
t = torch.ones(1, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
''', launcher="torchrun:1", env={"NCCL_DEBUG": "WARN", "NCCL_NET": "AWS Libfabric"}),
    Case("nccl_ib_forced", "NCCL_NET=IB on a host without InfiniBand", '''
import torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
t = torch.ones(1, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
''', launcher="torchrun:1", env={"NCCL_DEBUG": "WARN", "NCCL_NET": "IB"}),
    Case("dist_store_timeout", "rank 0 waits for a rank that never joins (env://)", '''
import datetime, torch.distributed as dist
dist.init_process_group("gloo", rank=0, world_size=2, timeout=datetime.timedelta(seconds=8))
''', env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29633"}),
    Case("dist_connect_refused", "a worker rank connects to a master that is not listening", '''
import datetime, torch.distributed as dist
dist.init_process_group("gloo", rank=1, world_size=2, timeout=datetime.timedelta(seconds=8))
''', env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29634"}),
    Case("dist_port_in_use", "the master port is already taken", '''
import datetime, socket, torch.distributed as dist
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
s.bind(("0.0.0.0", 29635)); s.listen()
dist.init_process_group("gloo", rank=0, world_size=1, timeout=datetime.timedelta(seconds=8))
''', env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29635"}),
    Case("anomaly_nan", "autograd anomaly mode finds a NaN produced in backward (sqrt of a negative)", '''
import torch
torch.autograd.set_detect_anomaly(True)
w = torch.tensor([-1.0, 4.0], device="cuda", requires_grad=True)
loss = torch.sqrt(w * 1.0).nan_to_num().sum()
loss.backward()
'''),
    Case("clip_grad_nonfinite", "clip_grad_norm_ with error_if_nonfinite on inf gradients", '''
import torch
m = torch.nn.Linear(4, 4).cuda()
out = m(torch.full((2, 4), 1e38, device="cuda")).pow(2).sum()
out.backward()
torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)
'''),
    Case("checkpoint_truncated", "torch.load of a checkpoint cut short by a full disk or a killed writer", '''
import os, tempfile, torch
p = os.path.join(tempfile.mkdtemp(), "step_1200.pt")
torch.save({"w": torch.zeros(1000)}, p)
with open(p, "r+b") as f:
    f.truncate(os.path.getsize(p) // 2)
torch.load(p)
'''),
    Case("checkpoint_disk_full", "torch.save to a file system with no space left (/dev/full)", '''
import torch
torch.save({"w": torch.zeros(1 << 20)}, "/dev/full")
'''),
    Case("checkpoint_missing", "resume from a checkpoint path that does not exist", '''
import torch
torch.load("/fsx/checkpoints/llama/step_4000/model.pt")
'''),
    Case("state_dict_mismatch", "load_state_dict with keys from another model", '''
import torch
m = torch.nn.Linear(4, 4)
m.load_state_dict({"weight": torch.zeros(4, 4), "bias": torch.zeros(4), "extra.scale": torch.ones(1)})
'''),
    Case("shape_mismatch", "a matmul with incompatible shapes", '''
import torch
a = torch.ones(8, 512, device="cuda"); b = torch.ones(256, 128, device="cuda")
a @ b
'''),
    Case("dtype_mismatch", "mixed dtypes in a linear layer", '''
import torch
m = torch.nn.Linear(4, 4).cuda()
m(torch.ones(2, 4, device="cuda", dtype=torch.bfloat16))
'''),
    Case("triton_out_of_resources", "a Triton kernel asks for more shared memory than the SM has", '''
import torch, triton, triton.language as tl

@triton.jit
def big(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(y_ptr + offs[:, None] * BLOCK + offs[None, :])
    c = tl.dot(a, b)
    tl.store(x_ptr + offs[:, None] * BLOCK + offs[None, :], c)

n = 512
x = torch.ones(n, n, device="cuda", dtype=torch.float16)
y = torch.ones(n, n, device="cuda", dtype=torch.float16)
big[(1,)](x, y, BLOCK=n)
torch.cuda.synchronize()
'''),
    Case("triton_compile_error", "a Triton kernel that does not compile", '''
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, n)  # n is not a constexpr
    tl.store(x_ptr + offs, 1.0)

x = torch.zeros(16, device="cuda")
k[(1,)](x, 16)
'''),
    Case("cpu_memory_error", "a host allocation larger than the machine", '''
import numpy as np
x = np.ones((1 << 20, 1 << 20, 64), dtype=np.float64)
'''),
    Case("enospc_write", "a log write to a full file system", '''
with open("/dev/full", "w") as f:
    for i in range(1000):
        f.write("step %d loss 1.234\\n" % i)
    f.flush()
'''),
    Case("cupy_misaligned", "a CuPy raw kernel reads an int through a misaligned address", '''
import cupy as cp
k = cp.RawKernel(r"""
extern "C" __global__ void f(const char* p, int* out) {
    *out = *(const int*)(p + 1);
}""", "f")
buf = cp.zeros(64, dtype=cp.uint8); out = cp.zeros(1, dtype=cp.int32)
k((1,), (1,), (buf, out))
cp.cuda.runtime.deviceSynchronize()
'''),
    Case("cupy_illegal_address", "a CuPy raw kernel writes through NULL", '''
import cupy as cp
k = cp.RawKernel(r"""
extern "C" __global__ void f(int* out) {
    int* p = 0; *p = 1; out[0] = 1;
}""", "f")
out = cp.zeros(1, dtype=cp.int32)
k((1,), (1,), (out,))
cp.cuda.runtime.deviceSynchronize()
'''),
    Case("jax_oom", "JAX allocates more than the GPU has", '''
import os
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax, jax.numpy as jnp
x = jnp.ones((1 << 40,), dtype=jnp.float32)
x.block_until_ready()
'''),
    Case("hf_model_missing", "from_pretrained of a model path that is not there (offline)", '''
from transformers import AutoConfig
AutoConfig.from_pretrained("/models/llama-3-8b-does-not-exist")
''', env={"HF_HUB_OFFLINE": "1"}),
    Case("nvidia_smi_bad_index", "nvidia-smi asked for a GPU index that does not exist", "", launcher="nvidia-smi"),
    Case("checkpoint_cuda_without_gpu", "a checkpoint saved on a GPU loaded where no GPU is visible", '''
import os, subprocess, sys, tempfile, torch
p = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"w": torch.ones(4, device="cuda")}, p)
env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
code = f"import torch; torch.load({p!r})"
sys.exit(subprocess.run([sys.executable, "-c", code], env=env).returncode)
'''),
    Case("dynamo_unsupported", "torch.compile(fullgraph=True) meets an operation it cannot trace", '''
import torch

@torch.compile(fullgraph=True)
def step(x):
    print("tracing", x.shape)
    return x.tolist()

step(torch.ones(4, device="cuda"))
'''),
    Case("torchrun_record_oom", "rank 1 runs out of GPU memory inside @record: the error file carries its traceback", '''
import os, time, torch
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    if os.environ["RANK"] == "1":
        free, total = torch.cuda.mem_get_info()
        torch.empty(int(total * 2) // 4, dtype=torch.float32, device="cuda")
    time.sleep(30)

main()
''', launcher="torchrun:2"),
    Case("diverged_loss", "a learning rate far too high: the loss printed each step becomes nan", '''
import torch
torch.manual_seed(0)
m = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e6)
x, y = torch.randn(64, 16, device="cuda"), torch.randn(64, 1, device="cuda")
for step in range(12):
    loss = torch.nn.functional.mse_loss(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    print({"loss": round(loss.item(), 4), "step": step})
'''),
    Case("dataloader_timeout", "a DataLoader worker slower than the loader's timeout", '''
import time, torch
from torch.utils.data import DataLoader, Dataset

class D(Dataset):
    def __len__(self): return 8
    def __getitem__(self, i):
        time.sleep(5)
        return torch.zeros(2)

for b in DataLoader(D(), batch_size=2, num_workers=1, timeout=1):
    pass
'''),
    Case("dataloader_spawn_pickle", "a DataLoader with spawned workers and a dataset that cannot be pickled", '''
import torch
from torch.utils.data import DataLoader, Dataset

def build():
    class Local(Dataset):
        def __len__(self): return 4
        def __getitem__(self, i): return torch.zeros(2)
    return Local()

if __name__ == "__main__":
    for b in DataLoader(build(), batch_size=2, num_workers=1, multiprocessing_context="spawn"):
        pass
'''),
]
