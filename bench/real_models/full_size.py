#!/usr/bin/env python3
"""Full-size models for the CPU benchmark (issue 19): the torchvision networks of the issue's table at
224x224 and batch 1, a small ConvNeXt, a 2-layer GPT (C=128) and a 2-layer T5-style encoder, with seeded
random weights (export_corpus.randomize). Two uses, both with Debian's python3-torch/-torchvision:
    full_size.py export OUT [MODEL...]   ONNX test cases by the TorchScript exporter (export_corpus layout;
                                         the dynamo exporter too where torch is 2.x)
    full_size.py time MODEL [--train] [--threads N] [--iters N] [--rounds N]
                                         PyTorch eager on the same model and input: the median round's ms per
                                         iteration; --train is a forward and a backward seeded with noise for
                                         the output gradient, weights only (as `fusebox run --train`)
Run with OMP_WAIT_POLICY=passive (bench/cpu_models.sh does)."""
import math, os, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_corpus import EXPORTERS, export_all, randomize  # noqa: E402


class GptBlock(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.fc, self.out = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(C, dim=2)
        q, k, v = [t.reshape(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.heads)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        att = torch.softmax(att.masked_fill(mask, float("-inf")), -1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln_2(x))))


class Gpt(nn.Module):  # GPT-2's shape: token + position embeddings, pre-norm blocks, tied-size LM head
    def __init__(self, vocab=1024, c=128, layers=2, heads=4, positions=128):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, c), nn.Embedding(positions, c)
        self.blocks = nn.ModuleList(GptBlock(c, heads) for _ in range(layers))
        self.ln_f, self.head = nn.LayerNorm(c), nn.Linear(c, vocab, bias=False)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


class RmsNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class T5Layer(nn.Module):  # T5's encoder layer: RMS norms, bias-free projections, a shared position bias, ReLU FFN
    def __init__(self, c, heads, ff):
        super().__init__()
        self.n1, self.n2 = RmsNorm(c), RmsNorm(c)
        self.q, self.k, self.v, self.o = (nn.Linear(c, c, bias=False) for _ in range(4))
        self.wi, self.wo = nn.Linear(c, ff, bias=False), nn.Linear(ff, c, bias=False)
        self.heads = heads

    def forward(self, x, bias):
        B, T, C = x.shape
        h = self.n1(x)
        q, k, v = [p(h).reshape(B, T, self.heads, C // self.heads).transpose(1, 2) for p in (self.q, self.k, self.v)]
        att = torch.softmax(q @ k.transpose(-2, -1) + bias, -1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(B, T, C))
        return x + self.wo(F.relu(self.wi(self.n2(x))))


class T5Encoder(nn.Module):
    def __init__(self, vocab=1024, c=128, layers=2, heads=4, ff=512, buckets=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, c)
        self.rel = nn.Embedding(buckets, heads)
        self.layers = nn.ModuleList(T5Layer(c, heads, ff) for _ in range(layers))
        self.norm, self.buckets = RmsNorm(c), buckets

    def forward(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T)
        rel = (pos.reshape(1, T) - pos.reshape(T, 1)).clamp(-(self.buckets // 2), self.buckets // 2 - 1) + self.buckets // 2
        bias = self.rel(rel).permute(2, 0, 1).unsqueeze(0)
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, bias)
        return self.norm(x)


def models():
    import torchvision
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig
    img = lambda: (torch.randn(1, 3, 224, 224),)
    ids = lambda: (torch.randint(0, 1024, (1, 64)),)
    small_convnext = [CNBlockConfig(32, 64, 2), CNBlockConfig(64, 128, 2), CNBlockConfig(128, 256, 2), CNBlockConfig(256, None, 2)]
    return {
        "resnet18": (lambda: torchvision.models.resnet18(), img),
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), img),
        "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), img),
        "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(), img),
        "convnext_small": (lambda: ConvNeXt(small_convnext, stochastic_depth_prob=0.0), img),
        "gpt_c128": (Gpt, ids),
        "t5_encoder_c128": (T5Encoder, ids),
    }


def time_eager(name, train, threads, iters, rounds):
    torch.set_num_threads(threads)
    build, make_inputs = models()[name]
    torch.manual_seed(0)
    m = build().eval()
    randomize(m)
    inputs = make_inputs()
    for p in m.parameters():
        p.requires_grad_(train)
    grad = None

    def step():
        nonlocal grad
        if not train:
            with torch.no_grad():
                return m(*inputs)
        y = m(*inputs)
        if grad is None:
            grad = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
        y.backward(grad)

    for _ in range(max(3, iters // 5)):
        step()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            step()
        times.append((time.perf_counter() - t0) * 1e3 / iters)
    return sorted(times)[len(times) // 2]


def main(argv):
    if len(argv) >= 2 and argv[0] == "export":
        old_torch = int(torch.__version__.split(".")[0]) < 2  # Debian's 1.13 has no dynamo exporter
        export_all(argv[1], (("torchvision+torch", models),), set(argv[2:]) or None, EXPORTERS[:1] if old_torch else EXPORTERS)
        return 0
    if len(argv) >= 2 and argv[0] == "time":
        opts = {"--threads": 2, "--iters": 20, "--rounds": 5}
        rest = argv[2:]
        train = "--train" in rest
        rest = [a for a in rest if a != "--train"]
        for k, v in zip(rest[::2], rest[1::2]):
            opts[k] = int(v)
        print(f"{time_eager(argv[1], train, opts['--threads'], opts['--iters'], opts['--rounds']):.4f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
