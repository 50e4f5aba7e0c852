#!/usr/bin/python3
"""Exports a small torch model with a custom op, com.example::MyOp, to ONNX.

MyOp(x; alpha: float, bias: int, lut: tensor [C], mode: string,
     taps: ints, gains: floats, tags: strings)
  y[n, c, h, w] = alpha * x[n, c, h, w] + bias + lut[c]
mode, taps, gains and tags do not change the result: they are there so that
the example carries an attribute of every ONNX kind; the kernel
(my_op_kernel.cc) reads them all through baton/custom_op.h and checks them.

The model is Conv -> MyOp -> Relu -> Conv. Writes, into OUT_DIR:
  model.onnx     the model (MyOp's output has a static shape in value_info)
  input.npy      a random input
  expected.npy   torch's own output for it (the reference the test compares to)

usage: export_model.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import torch

ALPHA = 1.5
BIAS = -2
LUT = [0.25, -0.5, 1.0, 2.0]  # one value per channel of MyOp's input


class MyOpFunction(torch.autograd.Function):
    """Runs MyOp in torch (for the reference output) and exports it as one node."""

    @staticmethod
    def forward(ctx, x):
        lut = torch.tensor(LUT, dtype=x.dtype).view(1, -1, 1, 1)
        return ALPHA * x + BIAS + lut

    @staticmethod
    def symbolic(g, x):
        y = g.op("com.example::MyOp", x, alpha_f=ALPHA, bias_i=BIAS,
                 lut_t=torch.tensor(LUT, dtype=torch.float32), mode_s="affine",
                 taps_i=[1, 2, 3], gains_f=[0.5, 2.0], tags_s=["edge", "demo"])
        # The output keeps x's dtype and shape: Baton takes a custom op's
        # output shape from the model, so it must be annotated.
        y.setType(x.type())
        return y


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 2, 1)

    def forward(self, x):
        y = self.conv1(x)
        y = MyOpFunction.apply(y)
        self.my_op_shape = list(y.shape)
        return self.conv2(torch.relu(y))


def annotate_custom_outputs(model, shape):
    """Gives MyOp's output the static shape torch computed.

    torch's exporter records a custom op's output with symbolic dims
    (dim_param); Baton needs every dim (it cannot infer a custom op's shapes).
    """
    outputs = {o for n in model.graph.node if n.domain == "com.example" for o in n.output}
    for vi in model.graph.value_info:
        if vi.name in outputs:
            dims = vi.type.tensor_type.shape.dim
            assert len(dims) == len(shape), (vi.name, len(dims), shape)
            for dim, value in zip(dims, shape):
                dim.Clear()
                dim.dim_value = value
            outputs.discard(vi.name)
    for name in outputs:  # none recorded: add one
        model.graph.value_info.append(
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shape))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        expected = net(x)
    path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(net, (x,), path, opset_version=13, input_names=["x"], output_names=["y"],
                      custom_opsets={"com.example": 1})
    model = onnx.load(path)
    annotate_custom_outputs(model, net.my_op_shape)
    onnx.save(model, path)
    np.save(os.path.join(out_dir, "input.npy"), x.numpy())
    np.save(os.path.join(out_dir, "expected.npy"), expected.numpy())
    print("wrote", path)


if __name__ == "__main__":
    main()
