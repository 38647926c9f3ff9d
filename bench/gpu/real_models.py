#!/usr/bin/env python3
"""Whole real models on the GPU in PyTorch: exports each to ONNX (TorchScript exporter, opset 17,
seeded random weights) for Fusebox, and times it eager and with torch.compile (default mode) in
the same process: median GPU ms per iteration over CUDA events, kernels per iteration, compile s.
Usage: real_models.py WORKLOAD OUT_DIR [--iters N]
  prints one line: eager_ms compiled_ms eager_kernels compiled_kernels compile_s compiled_max_abs_err
  and writes OUT_DIR/WORKLOAD.onnx and OUT_DIR/WORKLOAD_data/ (input_K.pb, and output_0.pb: eager's
  output on the GPU, TF32 off; for `fusebox run --data`)"""
import argparse, os, sys, time, torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


class GptSmall(torch.nn.Module):
    """GPT-2 small as nanoGPT writes it (12 layers, C=768, 12 heads, vocab 50304), attention an
    explicit causal softmax, returning the mean cross-entropy of the next-token targets."""

    def __init__(self, layers=12, C=768, heads=12, vocab=50304, T=512):
        super().__init__()
        self.heads = heads
        self.wte, self.wpe = torch.nn.Embedding(vocab, C), torch.nn.Embedding(T, C)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            b = torch.nn.Module()
            b.ln_1, b.attn, b.proj = torch.nn.LayerNorm(C), torch.nn.Linear(C, 3 * C), torch.nn.Linear(C, C)
            b.ln_2, b.fc, b.out = torch.nn.LayerNorm(C), torch.nn.Linear(C, 4 * C), torch.nn.Linear(4 * C, C)
            self.blocks.append(b)
        self.ln_f = torch.nn.LayerNorm(C)
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, idx, targets):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for b in self.blocks:
            q, k, v = b.attn(b.ln_1(x)).split(x.shape[2], dim=2)
            q, k, v = [z.reshape(B, T, self.heads, -1).transpose(1, 2) for z in (q, k, v)]
            att = torch.softmax((q @ k.transpose(-2, -1) * (1.0 / (q.shape[-1] ** 0.5))).masked_fill(self.mask[:T, :T], float("-inf")), -1)
            x = x + b.proj((att @ v).transpose(1, 2).reshape(B, T, -1))
            x = x + b.out(torch.nn.functional.gelu(b.fc(b.ln_2(x)), approximate="tanh"))
        logits = self.ln_f(x) @ self.wte.weight.t()
        return torch.nn.functional.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1))


class BertHidden(torch.nn.Module):
    """The encoder's last hidden state from input ids alone: transformers' forward takes its other
    arguments by keyword, which the TorchScript exporter's positional call collides with
    ("got multiple values for argument 'use_cache'")."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids):
        return self.bert(input_ids=input_ids).last_hidden_state


def workload(name):
    torch.manual_seed(0)
    if name == "gpt2_small_train":
        return GptSmall().train(), (torch.randint(0, 50304, (8, 512)), torch.randint(0, 50304, (8, 512)))
    if name in ("resnet18_infer", "mobilenet_v2_infer"):
        import torchvision
        m = getattr(torchvision.models, name[:-len("_infer")])()
        return m.eval(), (torch.randn(32, 3, 224, 224),)
    if name == "bert_base_infer":
        from transformers import BertConfig, BertModel
        cfg = BertConfig(attn_implementation="eager")  # bert-base: 12 layers, C=768, 12 heads
        return BertHidden(BertModel(cfg, add_pooling_layer=False)).eval(), (torch.randint(0, cfg.vocab_size, (8, 128)),)
    raise SystemExit("unknown workload " + name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("out")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--export-only", action="store_true", help="write the ONNX file and stop (no GPU needed)")
    a = ap.parse_args()
    m, args = workload(a.workload)
    os.makedirs(a.out, exist_ok=True)
    train = a.workload.endswith("_train")
    with torch.no_grad():  # weights in the file: GPT-2 small's 124 M parameters are 500 MB, under protobuf's 2 GB
        if train:  # the weights stay initializers Fusebox trains (no folding into constants)
            torch.onnx.export(m, args, os.path.join(a.out, a.workload + ".onnx"), dynamo=False, opset_version=17,
                              training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
        else:
            torch.onnx.export(m, args, os.path.join(a.out, a.workload + ".onnx"), dynamo=False, opset_version=17)
    if a.export_only:
        return
    from torch_gpu import timed, kernels  # same timing and kernel counting as the other workloads
    m = m.cuda()
    args = tuple(t.cuda() for t in args)
    cm = torch.compile(m)

    def first_output(fn):
        with torch.no_grad():
            y = fn(*args)
        return (y[0] if isinstance(y, (tuple, list)) or hasattr(y, "to_tuple") else y).float()
    expected = first_output(m)
    write_data_set(os.path.join(a.out, a.workload + "_data"), args, expected)

    def step(fn):
        def run():
            if train:
                for p in m.parameters():
                    p.grad = None
                fn(*args).backward()
            else:
                with torch.no_grad():
                    fn(*args)
        return run
    t0 = time.time()
    step(cm)()
    torch.cuda.synchronize()
    compile_s = time.time() - t0
    e, c = step(m), step(cm)
    err = (first_output(cm) - expected).abs().max().item()
    print("%.4f %.4f %d %d %.1f %.3g" % (timed(e, a.iters), timed(c, a.iters), kernels(e), kernels(c), compile_s, err))


def write_data_set(folder, args, expected):
    """ONNX's test-case layout: input_K.pb for the K-th model input, output_0.pb the expected output."""
    from onnx import numpy_helper
    os.makedirs(folder, exist_ok=True)
    for k, t in enumerate(args):
        with open(os.path.join(folder, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(t.cpu().numpy()).SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(expected.cpu().numpy()).SerializeToString())


if __name__ == "__main__":
    main()
