#!/usr/bin/python3
"""Exports issue 14's non-torchvision conformance models to ONNX, with
torch's output as the reference.

Usage: export_models14.py MODEL OUT_DIR [--opset N]

MODEL is one of:
  vit_b_16_32   torchvision's vit_b_16 built for 32x32 inputs; torchvision
                zero-initializes the classification head (the output would
                be all zeros), so the head is re-initialized (normal, std 0.05; torch.manual_seed(0)).
  autoencoder   Conv encoder; ConvTranspose, nn.Upsample (nearest) and
                nn.Upsample (bilinear) decoder; [1,3,32,32] input.
  transformer   nn.TransformerEncoder of two nn.TransformerEncoderLayer
                (d_model 64, 4 heads, batch_first, GELU) on [2,10,64] tokens.

Writes OUT_DIR/model.onnx, OUT_DIR/input.npy (seeded) and OUT_DIR/output.npy
(torch's float32 output, single-threaded), and prints the output's scale
(max |y|) and the largest |activation| seen on the way (for the tolerance,
which is relative to the output's scale).
"""

import argparse
import os
import warnings

import numpy as np
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def build(name, generator):
    if name == "vit_b_16_32":
        import torchvision
        model = torchvision.models.vit_b_16(weights=None, image_size=32)
        with torch.no_grad():
            nn.init.normal_(model.heads.head.weight, std=0.05)
            nn.init.normal_(model.heads.head.bias, std=0.05)
        return model, torch.randn(1, 3, 32, 32, generator=generator)
    if name == "autoencoder":
        return AutoEncoder(), torch.randn(1, 3, 32, 32, generator=generator)
    if name == "transformer":
        return Transformer(), torch.randn(2, 10, 64, generator=generator)
    raise SystemExit("unknown model '%s'" % name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("out_dir")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    model, x = build(args.model, generator)
    model.eval()
    peak = [0.0]

    def hook(_module, _inputs, output):
        if isinstance(output, torch.Tensor):
            peak[0] = max(peak[0], float(output.abs().max()))

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    with torch.no_grad():
        y = model(x)
    for h in handles:
        h.remove()
    os.makedirs(args.out_dir, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), os.path.join(args.out_dir, "model.onnx"),
                          opset_version=args.opset, input_names=["input"],
                          output_names=["output"])
    np.save(os.path.join(args.out_dir, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(args.out_dir, "output.npy"), y.numpy().astype(np.float32))
    print("output scale %.4g, largest activation %.4g" % (float(y.abs().max()), peak[0]))
    return 0


if __name__ == "__main__":
    main()
