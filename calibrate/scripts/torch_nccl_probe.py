#!/usr/bin/env python3
"""Cross-check of `moetwin-calibrate nccl` (one process driving every GPU) with one process per GPU, as
Megatron runs: torch.distributed NCCL collectives timed with CUDA events, back-to-back repetitions.

Usage (on the GPU node): torchrun --nproc_per_node N calibrate/scripts/torch_nccl_probe.py > probe.csv
Prints CSV: op,ranks,bytes,median_s (the median over samples of the slowest rank's time per call).
Sizes follow nccl-tests (all-gather: output, reduce-scatter: input, all-to-all: send buffer).
"""
import os
import statistics

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    ops = ["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv"]
    if rank == 0:
        print("op,ranks,bytes,median_s")
    size = 1024
    sizes = []
    while size <= (1 << 30):
        sizes.append(size)
        size *= 4
    for op in ops:
        for nbytes in sizes:
            elems = nbytes // 2
            if elems % n:
                continue
            send = torch.zeros(elems, dtype=torch.bfloat16, device=dev)
            recv = torch.empty(elems, dtype=torch.bfloat16, device=dev)
            chunk = elems // n

            def call():
                if op == "all_reduce":
                    dist.all_reduce(send)
                elif op == "reduce_scatter":
                    dist.reduce_scatter_tensor(recv[:chunk], send)
                elif op == "all_gather":
                    dist.all_gather_into_tensor(recv, send[:chunk])
                elif op == "all_to_all":
                    dist.all_to_all_single(recv, send)
                else:
                    peer_to, peer_from = (rank + 1) % n, (rank - 1) % n
                    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, send, peer_to),
                                                   dist.P2POp(dist.irecv, recv, peer_from)])
                    for r in reqs:
                        r.wait()

            for _ in range(5):
                call()
            torch.cuda.synchronize()
            reps = 20 if nbytes <= (1 << 20) else 5 if nbytes <= (64 << 20) else 1
            samples = []
            for _ in range(10):
                dist.barrier()
                torch.cuda.synchronize()
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(reps):
                    call()
                stop.record()
                stop.synchronize()
                t = torch.tensor([start.elapsed_time(stop) * 1e-3 / reps], device=dev)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                samples.append(t.item())
            if rank == 0:
                print(f"{op},{n},{nbytes},{statistics.median(samples):.9g}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
