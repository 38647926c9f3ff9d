#!/usr/bin/env python3
"""PyTorch eager versions of the built-in models (same shapes, same init scheme does not matter
for timing), timed on the CPU. Usage: torch_cpu.py MODEL [--train] [--dim NAME=SIZE]... [--iters N]
Prints: <ms per iteration>"""
import argparse, time
import torch
import torch.nn.functional as F

def dims(args, defaults):
    d = dict(defaults)
    for spec in args.dim:
        k, v = spec.split("=")
        d[k] = int(v)
    return d

def build(name, d):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: (torch.randn(*s, generator=g) * 0.05).requires_grad_()
    if name == "mlp":
        x, y = torch.randn(d["B"], 784), torch.randint(0, 10, (d["B"],))
        w1, b1, w2, b2 = r(256, 784), r(256), r(10, 256), r(10)
        return [w1, b1, w2, b2], lambda: F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)
    if name == "lenet":
        x, y = torch.randn(d["B"], 1, 28, 28), torch.randint(0, 10, (d["B"],))
        p = [r(6, 1, 5, 5), r(6), r(16, 6, 5, 5), r(16), r(120, 400), r(120), r(84, 120), r(84), r(10, 84), r(10)]
        def f():
            h = F.max_pool2d(F.relu(F.conv2d(x, p[0], p[1], padding=2)), 2)
            h = F.avg_pool2d(F.relu(F.conv2d(h, p[2], p[3])), 2).reshape(d["B"], -1)
            h = F.relu(F.linear(h, p[4], p[5])); h = F.relu(F.linear(h, p[6], p[7]))
            return F.cross_entropy(F.linear(h, p[8], p[9]), y)
        return p, f
    if name == "resnet_block":
        x = torch.randn(d["B"], 16, 16, 16)
        p = [r(16, 16, 3, 3), r(16), r(16), r(16, 16, 3, 3), r(16), r(16), r(10, 16), r(10)]
        rm, rv = torch.zeros(16), torch.ones(16)
        def f():
            h = F.relu(F.batch_norm(F.conv2d(x, p[0], padding=1), rm, rv, p[1], p[2], training=False))
            h = F.batch_norm(F.conv2d(h, p[3], padding=1), rm, rv, p[4], p[5], training=False)
            h = F.relu(h + x)
            return F.linear(F.adaptive_avg_pool2d(h, 1).reshape(d["B"], 16), p[6], p[7]).sum()
        return p, f
    if name == "layernorm_gelu":
        x = torch.randn(d["N"], d["C"])
        w, b = r(d["C"]), r(d["C"])
        return [w, b], lambda: (F.gelu(F.layer_norm(x, (d["C"],), w, b)) * 0.5 + x).sum()
    if name == "softmax_xent":
        x, y = torch.randn(d["N"], 256), torch.randint(0, 1000, (d["N"],))
        w, b = r(1000, 256), r(1000)
        return [w, b], lambda: F.cross_entropy(F.linear(x, w, b), y)
    if name == "gpt2_block":
        B, T, C = d["B"], d["T"], 768
        x = torch.randn(B, T, C)
        p = [r(C), r(C), r(3 * C, C), r(3 * C), r(C, C), r(C), r(C), r(C), r(4 * C, C), r(4 * C), r(C, 4 * C), r(C)]
        mask = torch.arange(T).reshape(1, T) > torch.arange(T).reshape(T, 1)
        def f():
            h = F.layer_norm(x, (C,), p[0], p[1])
            q, k, v = F.linear(h, p[2], p[3]).split(C, dim=2)
            q, k, v = [t.reshape(B, T, 12, 64).transpose(1, 2) for t in (q, k, v)]
            att = (q @ k.transpose(-2, -1)) * 0.125
            att = torch.softmax(att.masked_fill(mask, float("-inf")), -1)
            y = F.linear((att @ v).transpose(1, 2).reshape(B, T, C), p[4], p[5])
            x2 = x + y
            h = F.layer_norm(x2, (C,), p[6], p[7])
            return (x2 + F.linear(F.gelu(F.linear(h, p[8], p[9]), approximate="tanh"), p[10], p[11])).sum()
        return p, f
    raise SystemExit("unknown model " + name)

DEFAULTS = {"mlp": {"B": 32}, "lenet": {"B": 4}, "resnet_block": {"B": 4}, "layernorm_gelu": {"N": 256, "C": 1024},
            "softmax_xent": {"N": 64}, "gpt2_block": {"B": 2, "T": 32}}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model"); ap.add_argument("--train", action="store_true")
    ap.add_argument("--dim", action="append", default=[]); ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    params, f = build(a.model, dims(a, DEFAULTS[a.model]))
    def step():
        if a.train:
            for p in params: p.grad = None
            f().backward()
        else:
            with torch.no_grad(): f()
    for _ in range(3): step()
    t0 = time.perf_counter()
    for _ in range(a.iters): step()
    print("%.4f" % ((time.perf_counter() - t0) * 1000 / a.iters))

main()
