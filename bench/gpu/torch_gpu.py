#!/usr/bin/env python3
"""The four GPU workloads in PyTorch, timed eager and with torch.compile (Inductor) in one run:
median GPU ms per iteration over CUDA events, kernels per iteration (torch.profiler, CUDA kernel
events only: memsets and copies not counted), and the compiled-vs-eager max output difference.
Usage: torch_gpu.py WORKLOAD [--iters N]   prints one line: eager_ms compiled_ms eager_kernels compiled_kernels max_err
       torch_gpu.py copy                     prints the device copy bandwidth in GB/s (2 GiB copy_)"""
import argparse, statistics, torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

def workload(name):
    g = torch.Generator(device="cuda").manual_seed(0)
    rn = lambda *s, std=1.0: torch.randn(*s, device="cuda", generator=g) * std
    if name == "mlp_train":
        x, t = rn(4096, 1024), rn(4096, 1024)
        p = [rn(4096, 1024, std=0.03), rn(4096, std=0.03), rn(1024, 4096, std=0.015), rn(1024, std=0.015), 1 + rn(1024, std=0.1), rn(1024, std=0.1)]
        def f(p):
            h = F.linear(F.gelu(F.linear(x, p[0], p[1])), p[2], p[3])
            return F.mse_loss(F.layer_norm(h, (1024,), p[4], p[5]), t)
        return p, f, True
    if name == "gpt2_block_train":
        B, T, C = 8, 512, 768
        x = rn(B, T, C)
        p = [1 + rn(C, std=0.1), rn(C, std=0.02), rn(3 * C, C, std=0.02), rn(3 * C, std=0.02), rn(C, C, std=0.02), rn(C, std=0.02),
             1 + rn(C, std=0.1), rn(C, std=0.02), rn(4 * C, C, std=0.02), rn(4 * C, std=0.02), rn(C, 4 * C, std=0.02), rn(C, std=0.02)]
        mask = torch.arange(T, device="cuda").reshape(1, T) > torch.arange(T, device="cuda").reshape(T, 1)
        def f(p):
            h = F.layer_norm(x, (C,), p[0], p[1])
            q, k, v = F.linear(h, p[2], p[3]).split(C, dim=2)
            q, k, v = [z.reshape(B, T, 12, 64).transpose(1, 2) for z in (q, k, v)]
            att = torch.softmax((q @ k.transpose(-2, -1) * 0.125).masked_fill(mask, float("-inf")), -1)
            x2 = x + F.linear((att @ v).transpose(1, 2).reshape(B, T, C), p[4], p[5])
            h = F.layer_norm(x2, (C,), p[6], p[7])
            return x2 + F.linear(F.gelu(F.linear(h, p[8], p[9]), approximate="tanh"), p[10], p[11])
        return p, f, True
    if name == "layernorm_gelu_infer":
        x = rn(8192, 4096)
        p = [1 + rn(4096, std=0.1), rn(4096, std=0.1)]
        return p, (lambda p: F.gelu(F.layer_norm(x, (4096,), p[0], p[1])) * 0.5 + x), False
    if name == "softmax_xent_train":
        y = torch.randint(0, 1000, (8192,), device="cuda", generator=g)
        return [rn(8192, 32000)], (lambda p: F.cross_entropy(p[0], y)), True
    raise SystemExit("unknown workload " + name)

def timed(step, iters):
    for _ in range(5): step()
    torch.cuda.synchronize()
    ms = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record(); b.synchronize()
        ms.append(a.elapsed_time(b))
    return statistics.median(ms)

def kernels(step):
    from torch.profiler import profile, ProfilerActivity
    step(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(); torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "Memcpy" not in e.name and "Memset" not in e.name)

def copy_bandwidth(iters):
    """Device copy bandwidth in GB/s: a 2 GiB copy_, bytes read plus bytes written."""
    src = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), iters)
    return 2 * src.numel() / (ms * 1e-3) / 1e9

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("workload"); ap.add_argument("--iters", type=int, default=30)
    a = ap.parse_args()
    if a.workload == "copy":
        print("%.0f" % copy_bandwidth(a.iters))
        return
    params, f, train = workload(a.workload)
    params = [q.requires_grad_(train) for q in params]
    cf = torch.compile(f)
    def make(fn):
        def step():
            if train:
                for q in params: q.grad = None
                out = fn(params)
                out.sum().backward() if out.dim() else out.backward()
            else:
                with torch.no_grad(): fn(params)
        return step
    e, c = make(f), make(cf)
    with torch.no_grad():
        err = (f(params) - cf(params)).abs().max().item()
    print("%.4f %.4f %d %d %.3g" % (timed(e, a.iters), timed(c, a.iters), kernels(e), kernels(c), err))

if __name__ == "__main__":
    main()
