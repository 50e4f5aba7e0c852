#!/usr/bin/python3
"""Exports small torch modules whose constant subgraphs Baton must fold
(torch.arange, ones_like, expand, where and masked_fill on shapes,
x.new_zeros(x.shape)) and a few that keep Where/Equal/Cast/Expand as
runtime ops, at opsets 11, 13 and 17, with torch's output as the reference.

Usage: make_fold_models.py OUT_DIR

Writes OUT_DIR/<case>_op<opset>.onnx, OUT_DIR/<case>_input.npy and
OUT_DIR/<case>_output.npy (torch 1.13, export without torch's own constant
folding so the ONNX files keep the shape subgraphs).
"""

import os
import sys

import numpy as np
import onnx
import torch

torch.manual_seed(0)


class ArangeAdd(torch.nn.Module):
    """Position ids from the input's shape: Shape, Gather, Range, Cast."""

    def forward(self, x):
        pos = torch.arange(x.shape[-1], dtype=torch.float32)
        return x + pos * 0.5


class OnesLikeExpand(torch.nn.Module):
    """ones_like/new_zeros of shapes (ConstantOfShape), expand to x's shape."""

    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(1, 1, 6))

    def forward(self, x):
        z = x.new_zeros(x.shape)
        o = torch.ones_like(x)
        b = self.bias.expand(x.shape[0], x.shape[1], -1)
        return x * o + z + b


class MaskedFill(torch.nn.Module):
    """A causal mask from arange comparisons, masked_fill with it, softmax."""

    def forward(self, x):
        n = x.shape[-1]
        i = torch.arange(n)
        mask = i.unsqueeze(0) > i.unsqueeze(1)  # Greater on constants
        y = x.masked_fill(mask, -1e9)  # Where with a constant condition
        return torch.softmax(y, dim=-1)


class WhereOnShapes(torch.nn.Module):
    """Where/Equal on shape values (how view(-1) and expand(-1) are exported)."""

    def forward(self, x):
        shape = torch._shape_as_tensor(x)
        target = torch.where(shape == 4, torch.ones_like(shape) * 2, shape)
        y = x.reshape(x.shape[0], -1)
        scale = torch.floor(target.prod().float() / 3) + torch.ceil((target[0] + target[1]).float() / 4)
        return y.expand(2, y.shape[1]) * scale + x.flatten()[0]


class RuntimeCompare(torch.nn.Module):
    """Equal/Greater/Less/Where/Cast/Expand on data: runtime kernels."""

    def forward(self, x):
        g = x > 0.1
        l = x < -0.2
        e = x == x
        keep = torch.logical_and(e, ~l)
        y = torch.where(g, x, x * 0.25)
        y = torch.where(keep, y, torch.zeros_like(y))
        return y + g.float() + l.to(torch.int32).float() + x[:, :1].expand(-1, x.shape[1])


CASES = {
    "arange_add": (ArangeAdd, (2, 3, 8)),
    "ones_like_expand": (OnesLikeExpand, (2, 3, 6)),
    "masked_fill": (MaskedFill, (1, 2, 5, 5)),
    "where_on_shapes": (WhereOnShapes, (1, 4)),
    "runtime_compare": (RuntimeCompare, (3, 7)),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, (cls, shape) in CASES.items():
        m = cls().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(out, name + "_input.npy"), x.numpy())
        np.save(os.path.join(out, name + "_output.npy"), y.numpy())
        for opset in (11, 13, 17):
            path = os.path.join(out, "%s_op%d.onnx" % (name, opset))
            # Dynamic axes make torch trace the shape arithmetic instead of
            # baking the traced sizes in; the input then gets its static
            # shape back, as Baton requires.
            dims = {d: "d%d" % d for d in range(len(shape))}
            torch.onnx.export(m, (x,), path, opset_version=opset, do_constant_folding=False,
                              input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": dims, "y": {}})
            model = onnx.load(path)
            for d, dim in enumerate(model.graph.input[0].type.tensor_type.shape.dim):
                dim.Clear()
                dim.dim_value = shape[d]
            for o in model.graph.output:
                o.type.tensor_type.ClearField("shape")
            del model.graph.value_info[:]
            onnx.save(model, path)


if __name__ == "__main__":
    main()
