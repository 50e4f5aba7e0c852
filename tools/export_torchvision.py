#!/usr/bin/python3
"""Exports a torchvision architecture with random weights to ONNX.

Usage: export_torchvision.py MODEL OUT_DIR [--opset 13] [--seed 0] [--size 224]
                             [--no-constant-folding] [--keep-batchnorm]

Writes OUT_DIR/MODEL.onnx, OUT_DIR/input.npy (a seeded random [1,3,S,S]
float32 input) and OUT_DIR/output.npy (torch's float32 output for it,
computed single-threaded). Nothing is downloaded: weights are torchvision's
random initialization, BatchNorm statistics and affine parameters are
randomized so that folding them is not a no-op, and an all-zero Linear
weight (the head of torchvision's ViTs) is randomized so the output is not
all zeros.

Runs on Debian's python3-torch / python3-torchvision / python3-onnx.
"""

import argparse
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

# Constructor arguments some architectures need to build without weights and
# to return a plain tensor in eval mode.
EXTRA_KWARGS = {
    "googlenet": {"aux_logits": False, "init_weights": True},
    "inception_v3": {"aux_logits": False, "init_weights": True},
    # Segmentation models load an ImageNet backbone by default.
    "lraspp_mobilenet_v3_large": {"weights_backbone": None},
    "deeplabv3_mobilenet_v3_large": {"weights_backbone": None, "aux_loss": False},
    "fcn_resnet50": {"weights_backbone": None, "aux_loss": False},
}


def build_model(name):
    kwargs = dict(EXTRA_KWARGS.get(name, {}))
    get_model = getattr(torchvision.models, "get_model", None)
    if get_model is not None:
        return get_model(name, weights=None, **kwargs)
    builder = getattr(torchvision.models, name, None)
    if builder is None:
        raise SystemExit(f"unknown torchvision model '{name}'")
    return builder(weights=None, **kwargs)


class OutOnly(torch.nn.Module):
    """A segmentation model's "out" entry as its only output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def randomize_batchnorm(model, generator):
    """Non-trivial BN statistics and affine parameters (deterministic)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                if m.affine:
                    m.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                    m.bias.copy_(torch.randn(n, generator=generator) * 0.1)


def reinit_zero_linears(model, seed):
    """torchvision's ViTs zero-initialize the classification head, so their
    output would be all zeros and no comparison could fail: an all-zero
    Linear weight gets normal(std 0.05) weights and bias instead. Draws from
    its own generator, so models without such a layer are unchanged."""
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=generator) * 0.05)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=generator) * 0.05)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="torchvision model name, e.g. resnet18")
    parser.add_argument("out_dir")
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=224, help="input height and width")
    parser.add_argument("--no-constant-folding", action="store_true",
                        help="export without torch's constant folding")
    parser.add_argument("--keep-batchnorm", action="store_true",
                        help="keep BatchNormalization nodes (skip torch's Conv+BN fusion)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(args.seed)

    model = build_model(args.model)
    randomize_batchnorm(model, generator)
    reinit_zero_linears(model, args.seed)
    model.eval()

    x = torch.randn(1, 3, args.size, args.size, generator=generator, dtype=torch.float32)
    with torch.no_grad():
        y = model(x)
    if isinstance(y, dict) and "out" in y:  # segmentation models: {"out": ..., "aux": ...}
        model = OutOnly(model)
        y = y["out"]
    if not isinstance(y, torch.Tensor):
        raise SystemExit(f"model '{args.model}' does not return a single tensor")

    os.makedirs(args.out_dir, exist_ok=True)
    onnx_path = os.path.join(args.out_dir, args.model + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (x,), onnx_path,
            opset_version=args.opset,
            do_constant_folding=not args.no_constant_folding,
            input_names=["input"], output_names=["output"],
            # PRESERVE on an eval-mode model exports the same eval semantics
            # but skips the exporter's Conv+BN fusion.
            training=(torch.onnx.TrainingMode.PRESERVE if args.keep_batchnorm
                      else torch.onnx.TrainingMode.EVAL))
    np.save(os.path.join(args.out_dir, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(args.out_dir, "output.npy"), y.numpy().astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
