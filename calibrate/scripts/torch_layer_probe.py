#!/usr/bin/env python3
"""Times the compute ops of one decoder layer as PyTorch runs them on one GPU, to check the twin's
per-op compute (GEMM curves of `moetwin-calibrate gemm`, attention priced as GEMMs of its shape) against
real kernels: flash/cuDNN attention through scaled_dot_product_attention, and FP8 linear layers through
torch._scaled_mm with Transformer Engine's delayed-scaling data flow (cast-transpose of each GEMM input,
E4M3 forward, E5M2 gradients).

Usage (on the GPU node): python3 calibrate/scripts/torch_layer_probe.py > probe.csv
       python3 calibrate/scripts/torch_layer_probe.py --attention-sweep > attention.csv
Prints CSV: case,op,variant,median_s,tflops (the median of 30 timed calls after 5 warm-up calls, CUDA
events around each call). `variant` names the precision and, for attention, the SDPA backend; a backend
that refuses the shape prints `unsupported` in median_s.
Cases:
  proxy  uccl-dsv3-proxy (live-runs-p5en.csv): TP1, 4096 tokens, hidden 7168, MHA 128 heads x 56, 8 local
         experts of FFN 2048 receiving 4096 tokens each (EP 32, top-8 of 256, balanced).
  dsv3   DeepSeek-V3 at TP8: MLA core of 16 heads, q/k 192, v 128, 4096 tokens.
  gqa    a Llama/Qwen-style core: 32 query heads of 128 over 8 KV heads at TP1, 4096 tokens.
--attention-sweep: causal attention cores through cuDNN (Transformer Engine's fused attention on Hopper)
for `moetwin-calibrate fit --attention-csv`: head dims (q/k, v) 56/56, 64/64, 128/128 and MLA's 192/128,
8 to 64 heads of one sequence of 1,024 to 8,192 tokens (plus 128/128 with 8x fewer KV heads, GQA, as a
check). CSV: direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops,median_s with rows = heads x seq (the
query rows of the call) and flops Megatron-Core's causal count (forward 2 s^2 (qk + v) heads / 2,
backward 2.5x).
"""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

DEV = torch.device("cuda")
BF16 = torch.bfloat16
E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2
ONE = None  # unit scale tensor, set in main()


def timed(fn, warmup=5, reps=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def emit(case, op, variant, seconds, flops):
    if seconds is None:
        print(f"{case},{op},{variant},unsupported,")
    else:
        print(f"{case},{op},{variant},{seconds:.6e},{flops / seconds / 1e12:.1f}")
    sys.stdout.flush()


def attention(case, heads, kv_heads, dqk, dv, seq):
    q = torch.randn(1, heads, seq, dqk, device=DEV, dtype=BF16, requires_grad=True)
    k = torch.randn(1, kv_heads, seq, dqk, device=DEV, dtype=BF16, requires_grad=True)
    v = torch.randn(1, kv_heads, seq, dv, device=DEV, dtype=BF16, requires_grad=True)
    grad = torch.randn(1, heads, seq, dv, device=DEV, dtype=BF16)
    # Causal: half of the 2 x s^2 x (dqk + dv) x heads multiply-adds (Megatron-Core's count, model-flops.md).
    fwd_flops = 2.0 * seq * seq * (dqk + dv) * heads / 2
    for name, backend in [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("efficient", SDPBackend.EFFICIENT_ATTENTION)]:
        gqa = kv_heads != heads
        try:
            with sdpa_kernel(backend):
                def fwd():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

                out = fwd()

                def fwd_bwd():  # gradients returned, not accumulated into .grad (no extra adds)
                    return torch.autograd.grad(fwd(), (q, k, v), grad)

                t_fwd = timed(lambda: fwd())
                t_all = timed(fwd_bwd)
                del out
            emit(case, "attn.core", name, t_fwd, fwd_flops)
            emit(case, "attn.core_bwd", name, max(t_all - t_fwd, 1e-9), 2.5 * fwd_flops)
        except RuntimeError:
            emit(case, "attn.core", name, None, 0)
            emit(case, "attn.core_bwd", name, None, 0)


class Fp8Linear:
    """One linear layer with TE's delayed-scaling data flow: the weight cast-transposed once per iteration
    (outside the timed calls, as TE caches it across microbatches), the input cast-transposed per call,
    forward E4M3 x E4M3, dgrad E5M2 x E4M3, wgrad E5M2 x E4M3, outputs bf16. Scales are 1 (values are
    small random numbers), which changes nothing in the kernels' cost."""

    def __init__(self, w):  # w: [out, in] bf16
        self.w = w.to(E4M3)  # [N, K] row-major: as column-major [K, N] it is the forward's B
        self.wt = w.t().contiguous().to(E4M3)  # [K, N]: as column-major [N, K] it is dgrad's B

    def cast_input(self, x):  # x: [M, K] bf16 -> (x fp8 [M, K], x^T fp8 [K, M])
        return x.to(E4M3), x.t().contiguous().to(E4M3)

    def forward(self, x8):
        return torch._scaled_mm(x8, self.w.t(), ONE, ONE, out_dtype=BF16)

    def cast_grad(self, g):  # g: [M, N] bf16
        return g.to(E5M2), g.t().contiguous().to(E5M2)

    def dgrad(self, g8):
        return torch._scaled_mm(g8, self.wt.t(), ONE, ONE, out_dtype=BF16)

    def wgrad(self, g8t, x8t):  # [N, M] x [M, K]
        return torch._scaled_mm(g8t, x8t.t(), ONE, ONE, out_dtype=BF16)


def linear(case, op, tokens, k, n, groups=1):
    """`groups` linear layers of [k -> n] on `tokens` rows each (grouped experts run one GEMM per expert,
    as Transformer Engine's GroupedLinear does)."""
    xs = [torch.randn(tokens, k, device=DEV, dtype=BF16) * 0.1 for _ in range(groups)]
    ws = [torch.randn(n, k, device=DEV, dtype=BF16) * 0.02 for _ in range(groups)]
    gs = [torch.randn(tokens, n, device=DEV, dtype=BF16) * 0.1 for _ in range(groups)]
    fwd_flops = 2.0 * tokens * k * n * groups
    emit(case, op, "bf16", timed(lambda: [x @ w.t() for x, w in zip(xs, ws)]), fwd_flops)
    emit(case, op + "_bwd", "bf16",
         timed(lambda: [(g @ w, g.t() @ x) for x, w, g in zip(xs, ws, gs)]), 2 * fwd_flops)
    lin = [Fp8Linear(w) for w in ws]
    x8 = [m.cast_input(x) for m, x in zip(lin, xs)]
    g8 = [m.cast_grad(g) for m, g in zip(lin, gs)]
    emit(case, op, "fp8.gemm", timed(lambda: [m.forward(a[0]) for m, a in zip(lin, x8)]), fwd_flops)
    emit(case, op, "fp8.gemm+cast", timed(lambda: [m.forward(m.cast_input(x)[0]) for m, x in zip(lin, xs)]),
         fwd_flops)
    emit(case, op + "_bwd", "fp8.gemm",
         timed(lambda: [(m.dgrad(g[0]), m.wgrad(g[1], a[1])) for m, g, a in zip(lin, g8, x8)]), 2 * fwd_flops)

    def bwd_cast():
        out = []
        for m, g, a in zip(lin, gs, x8):
            g_fp8, g_t = m.cast_grad(g)
            out.append((m.dgrad(g_fp8), m.wgrad(g_t, a[1])))
        return out

    emit(case, op + "_bwd", "fp8.gemm+cast", timed(bwd_cast), 2 * fwd_flops)
    # The cast-transpose alone: what the twin prices as 4 bytes per element at HBM bandwidth.
    emit(case, op + ".cast_input", "fp8", timed(lambda: [m.cast_input(x) for m, x in zip(lin, xs)]), 0.0)


def attention_sweep():
    print("direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops,median_s")
    families = [(56, 56, 1), (64, 64, 1), (128, 128, 1), (192, 128, 1), (128, 128, 8)]
    for qk, dv, group in families:
        for heads in (8, 16, 32, 64):
            for seq in (1024, 2048, 4096, 8192):
                kv = heads // group
                q = torch.randn(1, heads, seq, qk, device=DEV, dtype=BF16, requires_grad=True)
                k = torch.randn(1, kv, seq, qk, device=DEV, dtype=BF16, requires_grad=True)
                v = torch.randn(1, kv, seq, dv, device=DEV, dtype=BF16, requires_grad=True)
                grad = torch.randn(1, heads, seq, dv, device=DEV, dtype=BF16)
                fwd_flops = 2.0 * seq * seq * (qk + dv) * heads / 2
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    def fwd():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=group > 1)

                    def fwd_bwd():  # gradients returned, not accumulated into .grad (no extra adds)
                        return torch.autograd.grad(fwd(), (q, k, v), grad)

                    try:
                        t_fwd = timed(fwd, warmup=3, reps=15)
                        t_bwd = max(timed(fwd_bwd, warmup=3, reps=15) - t_fwd, 1e-9)
                    except RuntimeError:
                        continue
                for direction, t, flops in (("fwd", t_fwd, fwd_flops), ("bwd", t_bwd, 2.5 * fwd_flops)):
                    print(f"{direction},{qk},{dv},{heads},{kv},{seq},{heads * seq},{flops:.6e},{t:.6e}")
                sys.stdout.flush()
                del q, k, v, grad


def main():
    global ONE
    torch.backends.cuda.matmul.allow_tf32 = False
    ONE = torch.ones((), device=DEV, dtype=torch.float32)
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuda {torch.version.cuda}, cudnn {torch.backends.cudnn.version()}")
    if "--attention-sweep" in sys.argv[1:]:
        attention_sweep()
        return
    print("case,op,variant,median_s,tflops")
    attention("proxy", 128, 128, 56, 56, 4096)
    attention("dsv3", 16, 16, 192, 128, 4096)
    attention("gqa", 32, 8, 128, 128, 4096)
    linear("proxy", "attn.qkv", 4096, 7168, 3 * 7168)
    linear("proxy", "attn.out_proj", 4096, 7168, 7168)
    linear("proxy", "moe.experts.fc1", 4096, 7168, 2 * 2048, groups=8)
    linear("proxy", "moe.experts.fc2", 4096, 2048, 7168, groups=8)


if __name__ == "__main__":
    main()
