import torch, onnx, io
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.conv1 = torch.nn.Conv2d(3, 4, 3); self.relu = torch.nn.ReLU()
    def forward(self, x): return self.relu(self.conv1(x))
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.layer2 = torch.nn.Sequential(Block())
    def forward(self, x): return self.layer2(x)
for dyn in (True, False):
    f = io.BytesIO()
    torch.onnx.export(Net().eval(), (torch.randn(1, 3, 8, 8),), f, dynamo=dyn)
    m = onnx.load_from_string(f.getvalue())
    print("dynamo" if dyn else "torchscript")
    for n in m.graph.node:
        print(" ", n.name, n.op_type, [(p.key, p.value[:120]) for p in n.metadata_props if 'scope' in p.key or 'namespace' in p.key])
    print("  inits", [i.name for i in m.graph.initializer][:4])
