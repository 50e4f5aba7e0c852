#!/usr/bin/python3
"""Exports a small torch module made of issue 14's elementwise, activation
and reduction ops to ONNX, with torch's outputs as references.

Usage: export_ops14.py OUT_DIR --opset N

Writes OUT_DIR/ops14.onnx, OUT_DIR/input.npy (seeded [1,8,6,6] float32) and
OUT_DIR/output<k>.npy for each of the module's outputs (torch, float32,
single-threaded): a float tensor through GELU, Mish, Softplus, ELU, PReLU,
maximum/minimum, log_softmax, sum and amax; argmax (int64); topk values and
indices (int64); and a sqrt/pow/exp/log/abs/neg/reciprocal/erf/amin/repeat
(Tile) chain.
"""

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F


class Ops14(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.gelu = torch.nn.GELU()
        self.mish = torch.nn.Mish()
        self.prelu = torch.nn.PReLU(8)
        self.elu = torch.nn.ELU(alpha=0.7)
        self.softplus = torch.nn.Softplus()
        with torch.no_grad():
            self.prelu.weight.copy_(torch.linspace(-0.5, 0.5, 8))

    def forward(self, x):
        a = self.gelu(self.conv(x))
        b = self.mish(x) + self.softplus(x) - self.elu(x)
        c = self.prelu(x - 0.2)
        m = torch.maximum(a, b) - torch.minimum(b, c)
        ls = F.log_softmax(m, dim=1)
        s = torch.sum(ls, dim=(2, 3), keepdim=True) * 0.01 + torch.amax(m, dim=1, keepdim=True)
        main = ls + s
        idx = torch.argmax(m, dim=1)
        top_v, top_i = torch.topk(m.flatten(2), 5, dim=2)
        y = torch.abs(x) + 0.5
        chain = (torch.sqrt(y) + torch.pow(y, 2.0) + torch.exp(-y) + torch.log(y)
                 - torch.reciprocal(y) + torch.erf(-x) + torch.amin(y, dim=3, keepdim=True)
                 + y[:, :, :3].repeat(1, 1, 2, 1))
        return main, idx, top_v, top_i, chain


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Ops14().eval()
    x = torch.randn(1, 8, 6, 6, generator=torch.Generator().manual_seed(1))
    os.makedirs(args.out_dir, exist_ok=True)
    with torch.no_grad():
        outputs = model(x)
        torch.onnx.export(model, (x,), os.path.join(args.out_dir, "ops14.onnx"),
                          opset_version=args.opset, input_names=["x"],
                          output_names=[f"out{k}" for k in range(len(outputs))])
    np.save(os.path.join(args.out_dir, "input.npy"), x.numpy())
    for k, o in enumerate(outputs):
        np.save(os.path.join(args.out_dir, f"output{k}.npy"), o.numpy())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
