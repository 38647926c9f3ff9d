#!/usr/bin/env python3
"""Exports small real torchvision models to ONNX at batch 1 with seeded random weights, with both
exporters (TorchScript: dynamo=False, torch.export: dynamo=True), for checking Fusebox on models it
did not write. Run on the lent H200 machine (torch, torchvision, onnx there):
    python3 bench/real_models/export.py OUTDIR [SIZE]
Writes OUTDIR/<model>_b1_<exporter>.onnx (weights inline, each under 16 MiB) and prints one line
per model with PyTorch's output checksum."""
import sys, os, torch, torchvision

out = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 64
os.makedirs(out, exist_ok=True)
models = {
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(num_classes=10),
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(num_classes=10),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(num_classes=10),
    "mnasnet0_5": lambda: torchvision.models.mnasnet0_5(num_classes=10),
    "resnet18_w": lambda: torchvision.models.resnet.ResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1], num_classes=10),
}
for name, make in models.items():
    torch.manual_seed(0)
    m = make().eval()
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        y = m(x)
    for dynamo in (False, True):
        path = os.path.join(out, f"{name}_b1_{'dynamo' if dynamo else 'ts'}.onnx")
        try:
            kw = dict(dynamo=True, external_data=False) if dynamo else dict(dynamo=False)
            torch.onnx.export(m, (x,), path, input_names=["x"], output_names=["logits"], opset_version=18, **kw)
            print(f"{path}: {os.path.getsize(path)} bytes, torch output sum {y.sum().item():.6f}")
        except Exception as e:  # one exporter failing must not hide the others
            print(f"{path}: export failed: {type(e).__name__}: {str(e)[:200]}")
