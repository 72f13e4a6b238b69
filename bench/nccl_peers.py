# NCCL all-reduce and all-gather of float32 through PyTorch, one process per GPU, with the
# bus-bandwidth formula of NVIDIA's nccl-tests (all-reduce 2(n-1)/n of the bytes, all-gather
# (n-1)/n of the result), to set beside bench/dist.lua's figures for luda.dist:
#   torchrun --nproc_per_node=G bench/nccl_peers.py [MiB ...]    (default 1024)
# Rank 0 prints each size's median time of 20 runs, timed on the host around a synchronize.
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank, size = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))


def median_ms(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    dist.barrier()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        t.append((time.perf_counter() - t0) * 1e3)
    m = torch.tensor([statistics.median(t)], device="cuda")
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    return m.item()


for mib in [int(a) for a in sys.argv[1:]] or [1024]:
    n = mib * (1 << 20) // 4
    x = torch.full((n,), float(rank + 1), device="cuda")
    ms = median_ms(lambda: dist.all_reduce(x))
    out = torch.empty(size * n, device="cuda")
    gms = median_ms(lambda: dist.all_gather_into_tensor(out, x))
    if rank == 0:
        bus = 2 * (size - 1) / size * n * 4 / (ms * 1e-3) / 1e9
        gbus = (size - 1) / size * size * n * 4 / (gms * 1e-3) / 1e9
        print(f"torch {torch.__version__} NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}: "
              f"allreduce float32 {mib:4d} MiB on {size} ranks: {ms:8.3f} ms, bus {bus:6.1f} GB/s; "
              f"allgather {gms:8.3f} ms, bus {gbus:6.1f} GB/s")
dist.destroy_process_group()
