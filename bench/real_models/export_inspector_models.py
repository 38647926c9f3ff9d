#!/usr/bin/env python3
"""Exports the real models the inspector (fusebox gui) is checked on: torchvision resnet18 and
mobilenet_v2, and small Hugging Face GPT-2 and BERT configs, with seeded random weights, by both
PyTorch ONNX exporters (dynamo=False: TorchScript, dynamo=True: torch.export), opset 18.
Run on the lent H200 machine (torch, torchvision, transformers, onnx there):
    python3 bench/real_models/export_inspector_models.py OUTDIR
Files over 15 MiB are split into OUTDIR/<name>.onnx.part-aa, -ab, ... (the device's $OUT takes
16 MiB a file); join them with `cat name.onnx.part-* > name.onnx`."""
import os, subprocess, sys, torch, torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=64)
    cfg._attn_implementation = "eager"
    return GPT2LMHeadModel(cfg), (torch.randint(0, 1000, (1, 16)),), ["input_ids"]


def bert():
    from transformers import BertConfig, BertModel
    cfg = BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=256,
                     vocab_size=1000, max_position_embeddings=64)
    cfg._attn_implementation = "eager"
    return BertModel(cfg), (torch.randint(0, 1000, (1, 16)),), ["input_ids"]


models = {
    "resnet18": lambda: (torchvision.models.resnet18(num_classes=10), (torch.randn(1, 3, 64, 64),), ["x"]),
    "mobilenet_v2": lambda: (torchvision.models.mobilenet_v2(num_classes=10), (torch.randn(1, 3, 64, 64),), ["x"]),
    "gpt2_2l": gpt2,
    "bert_2l": bert,
}


class LogitsOnly(torch.nn.Module):  # Hugging Face models return a dict; export its first tensor
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        r = self.m(x)
        return r[0] if isinstance(r, (tuple, list)) else (r.logits if hasattr(r, "logits") else r.last_hidden_state if hasattr(r, "last_hidden_state") else r)


for name, make in models.items():
    torch.manual_seed(0)
    m, args, names = make()
    m = LogitsOnly(m.eval()).eval() if name in ("gpt2_2l", "bert_2l") else m.eval()
    with torch.no_grad():
        y = m(*args)
    for dynamo in (False, True):
        path = os.path.join(out, f"{name}_{'dynamo' if dynamo else 'ts'}.onnx")
        try:
            kw = dict(dynamo=True, external_data=False) if dynamo else dict(dynamo=False)
            torch.onnx.export(m, args, path, input_names=names, output_names=["y"], opset_version=18, **kw)
            size = os.path.getsize(path)
            print(f"{path}: {size} bytes, torch output sum {y.sum().item():.6f}", flush=True)
            if size > 15 * 2**20:
                subprocess.run(["split", "-b", str(15 * 2**20), path, path + ".part-"], check=True)
                os.remove(path)
        except Exception as e:  # one exporter failing must not hide the others
            print(f"{path}: export failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
