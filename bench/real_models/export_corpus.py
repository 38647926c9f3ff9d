#!/usr/bin/env python3
"""The real-model corpus (issue 18): small configs of torchvision, timm and transformers models with
seeded random weights (randomize() below), each exported by BOTH exporters -- TorchScript (dynamo=False, opset 17) and
torch.export (dynamo=True, opset 18) -- with PyTorch's outputs as the expected outputs, in the ONNX
backend-test layout Fusebox's `conformance` command reads:
    OUT/test_<model>_<ts|dynamo>/model.onnx
    OUT/test_<model>_<ts|dynamo>/test_data_set_0/input_<i>.pb, output_0.pb
Run on the lent GPU machine (torch, torchvision, timm, transformers, onnx there; CPU is enough):
    python3 bench/real_models/export_corpus.py OUT [MODEL...]
Prints one line per export (size, or why it failed) and writes OUT/MANIFEST.tsv. Widths are cut so
every model stays under ~1.2 MB: a corpus that lives in the repository."""
import os, sys, traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
import onnx
from onnx import numpy_helper


class Logits(nn.Module):
    """A Hugging Face model as one tensor out (logits or last hidden state), tuples not dicts."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args):
        out = self.model(*args, return_dict=True)
        return getattr(out, self.key)


def torchvision_models():
    import torchvision
    from torchvision.models.segmentation.fcn import FCNHead

    class Segmenter(nn.Module):  # a segmentation head on a small backbone, upsampled to the input (Resize)
        def __init__(self):
            super().__init__()
            self.backbone = torchvision.models.mobilenet_v2(width_mult=0.25).features[:-1]  # not its 1280-wide last conv
            self.head = FCNHead(self.backbone[-1].out_channels, 6)

        def forward(self, x):
            y = self.head(self.backbone(x))
            return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)

    img = lambda: (torch.randn(1, 3, 32, 32),)
    return {
        "tv_mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10), img),
        "tv_shufflenet_v2": (lambda: torchvision.models.ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10), img),
        "tv_densenet": (lambda: torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2, 2), num_init_features=16, bn_size=2,
                                                            num_classes=10), img),
        "tv_fcn_segmenter": (Segmenter, lambda: (torch.randn(1, 3, 64, 64),)),
    }


def timm_models():
    import timm
    from timm.models.resnet import ResNet, BasicBlock
    from timm.models.convnext import ConvNeXt
    from timm.models.vision_transformer import VisionTransformer
    from timm.models.mlp_mixer import MlpMixer

    img = lambda: (torch.randn(1, 3, 32, 32),)
    return {
        "timm_resnet": (lambda: ResNet(BasicBlock, [1, 1, 1, 1], channels=(8, 16, 32, 64), stem_width=8, num_classes=10), img),
        "timm_convnext": (lambda: ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 32, 64), num_classes=10), img),
        "timm_mixer": (lambda: MlpMixer(num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=32), img),
        "timm_vit": (lambda: VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2, num_classes=10), img),
        "timm_efficientnet": (lambda: timm.models.efficientnet._gen_efficientnet("efficientnet_b0", channel_multiplier=0.25,
                                                                                 depth_multiplier=0.34, pretrained=False, num_classes=10), img),
    }


def transformers_models():
    from transformers import (BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel, T5Config,
                              T5EncoderModel, DistilBertConfig, DistilBertModel, WhisperConfig)
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    ids = lambda: (torch.randint(0, 256, (1, 16)),)
    bert = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                max_position_embeddings=64, num_labels=3)
    return {
        "hf_bert": (lambda: Logits(BertForSequenceClassification(BertConfig(**bert)), "logits"), ids),
        "hf_distilbert": (lambda: Logits(DistilBertModel(DistilBertConfig(vocab_size=256, dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                                                                          max_position_embeddings=64)), "last_hidden_state"), ids),
        "hf_gpt2": (lambda: Logits(GPT2LMHeadModel(GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=2, n_positions=64)), "logits"), ids),
        "hf_t5_encoder": (lambda: Logits(T5EncoderModel(T5Config(vocab_size=256, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_heads=2)),
                                         "last_hidden_state"), ids),
        "hf_whisper_encoder": (lambda: Logits(WhisperEncoder(WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=2,
                                                                           encoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32)),
                                              "last_hidden_state"), lambda: (torch.randn(1, 16, 64),)),
    }


def torch_models():
    class LstmTagger(nn.Module):  # a bidirectional LSTM over a static sequence, then a linear per step
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, num_layers=1, batch_first=True, bidirectional=True)
            self.out = nn.Linear(32, 5)

        def forward(self, x):
            return self.out(self.lstm(x)[0])

    class GruClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(8, 16, batch_first=True)
            self.out = nn.Linear(16, 3)

        def forward(self, x):
            return self.out(self.gru(x)[0][:, -1])

    seq = lambda: (torch.randn(2, 7, 8),)
    return {"torch_lstm": (LstmTagger, seq), "torch_gru": (GruClassifier, seq)}


def randomize(m):
    """Seeded weights that exercise every op: libraries initialise heads and biases to zeros (timm's
    Mixer head gives all-zero logits) and norms to the identity. Weights ~ N(0, 1/fan_in), biases
    and norm parameters around their initial values, batch-norm statistics away from 0 and 1."""
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn_like(p) / max(1, p[0].numel()) ** 0.5)
            else:
                p.add_(torch.randn_like(p) * 0.1)
        for mod in m.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
                mod.running_mean.copy_(torch.randn_like(mod.running_mean) * 0.1)
                mod.running_var.copy_(torch.rand_like(mod.running_var) + 0.5)


def write_case(folder, model_path, inputs, output):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    os.replace(model_path, os.path.join(folder, "model.onnx"))
    graph = onnx.load(os.path.join(folder, "model.onnx")).graph
    initializers = {i.name for i in graph.initializer}
    names = [i.name for i in graph.input if i.name not in initializers]
    for i, (name, t) in enumerate(zip(names, inputs)):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.detach().numpy(), name).SerializeToString())
    out_name = graph.output[0].name
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(output.detach().numpy(), out_name).SerializeToString())


EXPORTERS = (("ts", 17), ("dynamo", 18))


def export_all(out, sources, only=None, exporters=EXPORTERS):
    """Exports every model of `sources` ((source, make) pairs; make() -> {name: (build, make_inputs)}) with the
    `exporters` ((name, opset) pairs; both by default) into `out`, one line each, and writes out/MANIFEST.tsv.
    `only`: names to keep (all when None)."""
    os.makedirs(out, exist_ok=True)
    manifest = []
    groups = {}
    for source, make in sources:
        try:
            groups[source] = make()
        except Exception as e:  # a library missing must not hide the others
            print(f"{source}: cannot build its models: {type(e).__name__}: {e}")
    for source, models in groups.items():
        for name, (build, make_inputs) in models.items():
            if only and name not in only:
                continue
            torch.manual_seed(0)
            try:
                m = build().eval()
                randomize(m)
                inputs = make_inputs()
                with torch.no_grad():
                    y = m(*inputs)
                params = sum(p.numel() for p in m.parameters())
            except Exception as e:
                print(f"{name}: cannot build: {type(e).__name__}: {str(e)[:200]}")
                manifest.append((name, source, "-", "build failed", str(e)[:200].replace("\t", " ").replace("\n", " ")))
                continue
            for exporter, opset in exporters:
                folder = os.path.join(out, f"test_{name}_{exporter}")
                tmp = os.path.join(out, f".{name}_{exporter}.onnx")
                try:
                    kw = dict(dynamo=True, external_data=False) if exporter == "dynamo" else dict(dynamo=False)
                    if int(torch.__version__.split(".")[0]) < 2:
                        kw = {}  # torch 1.x (Debian's): the TorchScript exporter is the only one, without the keyword
                    torch.onnx.export(m, inputs, tmp, opset_version=opset, input_names=[f"input_{i}" for i in range(len(inputs))],
                                      output_names=["output"], **kw)
                    write_case(folder, tmp, inputs, y)
                    size = os.path.getsize(os.path.join(folder, "model.onnx"))
                    print(f"{folder}: {params} params, {size} bytes, opset {opset}, output {tuple(y.shape)} sum {y.sum().item():.6f}")
                    manifest.append((name, source, exporter, "ok", f"{params} params, {size} bytes, opset {opset}"))
                except Exception as e:
                    msg = f"{type(e).__name__}: {str(e)[:300]}".replace("\t", " ").replace("\n", " ")
                    print(f"{folder}: export failed: {msg}")
                    manifest.append((name, source, exporter, "export failed", msg))
                    if os.path.exists(tmp):
                        os.remove(tmp)
    with open(os.path.join(out, "MANIFEST.tsv"), "w") as f:
        f.write("model\tsource\texporter\tstatus\tdetail\n")
        for row in manifest:
            f.write("\t".join(row) + "\n")
    print(f"torch {torch.__version__}, onnx {onnx.__version__}")


if __name__ == "__main__":
    export_all(sys.argv[1], (("torchvision", torchvision_models), ("timm", timm_models), ("transformers", transformers_models),
                             ("torch", torch_models)), set(sys.argv[2:]) or None)
