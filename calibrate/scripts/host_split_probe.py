#!/usr/bin/env python3
"""Measures the CPU (host) time one training layer spends issuing its forward and its backward, to check the
twin's host model: per-launch cost `launch_s` and the backward's host time, which the twin prices at half the
forward's (sim kBackwardLaunchRatio) while the qwen3-235b mb 1 rows measure ~1.6x the forward
(docs/2026-12-07-a2a-model-dependence.md: 4.2 ms forward, 6.8 ms backward per layer).

Method: a layer at a token count small enough that the GPU drains its queue faster than the host fills it, so
the wall time of the Python call is host time. Forward: perf_counter around the module call, no sync.
Backward: perf_counter around `loss.backward()`, which returns once the autograd engine has issued every
backward node (not when the GPU finishes). Each case reports the median of 30 timed iterations after 5
warm-up ones, with torch.cuda.synchronize() between iterations so each starts with an empty queue, and the
number of CUDA kernels each pass launched (torch.profiler, one extra iteration), so host time per launch
follows.

Usage (on the GPU node): python3 calibrate/scripts/host_split_probe.py > host-split.csv
Prints CSV: case,module,pass,median_host_s,kernels,host_s_per_kernel
Cases (bf16, 256 tokens, hidden 4096 unless named):
  torch-linear      one nn.Linear 4096 -> 4096 (eager PyTorch: the C++ autograd engine issues dgrad + wgrad)
  torch-moe-layer   a qwen3-235b-shaped MoE decoder layer in eager PyTorch: RMSNorm, QKV (64 q heads, 4 kv
                    heads of 128), SDPA, output projection, RMSNorm, router (128 experts, top-8, softmax),
                    token permute (argsort + index_select), 4 local experts (EP32) as a Python loop of SwiGLU
                    FFNs of 1536, unpermute (index_add_), residuals
  te-*              the same with te.Linear in place of nn.Linear, when Transformer Engine is importable;
                    else one row saying it is not
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = torch.device("cuda")
BF16 = torch.bfloat16
TOKENS = 256
HIDDEN = 4096


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=DEV, dtype=BF16))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + 1e-6)).to(BF16) * self.weight


class Expert(nn.Module):
    def __init__(self, hidden, ffn, linear):
        super().__init__()
        self.fc1 = linear(hidden, 2 * ffn)
        self.fc2 = linear(ffn, hidden)

    def forward(self, x):
        gate, up = self.fc1(x).chunk(2, dim=-1)
        return self.fc2(F.silu(gate) * up)


class MoeLayer(nn.Module):
    """A qwen3-235b-shaped decoder layer at EP32 (4 local experts), eager, one GPU (no all-to-all)."""

    def __init__(self, linear, experts=None):
        super().__init__()
        heads, kv_heads, head_dim = 64, 4, 128
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.norm1 = RMSNorm(HIDDEN)
        self.qkv = linear(HIDDEN, (heads + 2 * kv_heads) * head_dim)
        self.proj = linear(heads * head_dim, HIDDEN)
        self.norm2 = RMSNorm(HIDDEN)
        self.router = nn.Linear(HIDDEN, 128, bias=False, device=DEV, dtype=BF16)
        self.local_experts = 4
        self.experts = experts if experts is not None else nn.ModuleList(
            [Expert(HIDDEN, 1536, linear) for _ in range(self.local_experts)])

    def attention(self, x):
        t = x.shape[0]
        qkv = self.qkv(x)
        q, k, v = qkv.split([self.heads * self.head_dim, self.kv_heads * self.head_dim,
                             self.kv_heads * self.head_dim], dim=-1)
        q = q.view(t, self.heads, self.head_dim).transpose(0, 1)
        k = k.view(t, self.kv_heads, self.head_dim).transpose(0, 1)
        v = v.view(t, self.kv_heads, self.head_dim).transpose(0, 1)
        rep = self.heads // self.kv_heads
        k = k.repeat_interleave(rep, dim=0)
        v = v.repeat_interleave(rep, dim=0)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(o.transpose(0, 1).reshape(t, self.heads * self.head_dim))

    def moe(self, x):
        t = x.shape[0]
        logits = self.router(x).float()
        probs, idx = torch.topk(torch.softmax(logits, dim=-1), 8, dim=-1)
        # Host work only, not routing fidelity: each token's first four choices are mapped onto the 4 local
        # experts and the permuted rows split evenly (t rows per expert), so no device-to-host sync is needed
        # (Megatron's dropless path has one; the twin prices it apart, moe_host_s).
        flat = idx[:, :4].reshape(-1) % self.local_experts
        order = torch.argsort(flat, stable=True)
        token_of = order // 4
        permuted = x.index_select(0, token_of)
        weights = probs[:, :4].reshape(-1).index_select(0, order).to(BF16).unsqueeze(-1)
        outs = []
        rows = permuted.shape[0] // self.local_experts
        for e, expert in enumerate(self.experts):
            outs.append(expert(permuted[e * rows:(e + 1) * rows]))
        y = torch.cat(outs, dim=0) * weights
        out = torch.zeros_like(x)
        out.index_add_(0, token_of, y)
        return out

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.moe(self.norm2(x))


def torch_linear(i, o):
    return nn.Linear(i, o, bias=False, device=DEV, dtype=BF16)


def kernels_of(fn):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def measure(case, module_name, module, reps=30, warmup=5):
    x = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=BF16, requires_grad=True)
    fwd, bwd = [], []
    for i in range(warmup + reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        y = module(x)
        t1 = time.perf_counter()
        loss = y.float().sum()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        if i >= warmup:
            fwd.append(t1 - t0)
            bwd.append(t3 - t2)
    # Kernel counts: the forward alone, then forward + loss + backward; the backward's is the difference less
    # the loss's (one cast and one reduction, counted apart).
    def fwd_only():
        with torch.no_grad():
            module(x)

    def loss_only():
        with torch.no_grad():
            module(x).float().sum()

    def full():
        module(x).float().sum().backward()

    k_fwd = kernels_of(fwd_only)
    k_loss = kernels_of(loss_only) - k_fwd
    k_bwd = kernels_of(full) - k_fwd - k_loss
    for name, times, k in (("forward", fwd, k_fwd), ("backward", bwd, k_bwd)):
        med = statistics.median(times)
        per = med / k if k > 0 else float("nan")
        print(f"{case},{module_name},{name},{med:.6e},{k},{per:.6e}", flush=True)


def main():
    print("case,module,pass,median_host_s,kernels,host_s_per_kernel")
    torch.manual_seed(0)
    measure("torch-linear", "nn.Linear 4096x4096", torch_linear(HIDDEN, HIDDEN))
    measure("torch-moe-layer", "qwen3-235b layer EP32, eager", MoeLayer(torch_linear))
    try:
        import transformer_engine.pytorch as te
    except Exception as e:  # noqa: BLE001 - any import failure means no TE on this node
        print(f"te,transformer_engine not importable ({type(e).__name__}),none,nan,0,nan")
        return 0
    print(f"# transformer_engine {getattr(te, '__version__', '?')}", file=sys.stderr)

    def te_linear(i, o):
        return te.Linear(i, o, bias=False, params_dtype=BF16, device="cuda")

    measure("te-linear", "te.Linear 4096x4096", te_linear(HIDDEN, HIDDEN))
    measure("te-moe-layer", "qwen3-235b layer EP32, te.Linear experts", MoeLayer(te_linear))
    return 0


if __name__ == "__main__":
    sys.exit(main())
