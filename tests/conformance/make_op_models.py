#!/usr/bin/python3
"""Small ONNX models for the Resize/Upsample, ConvTranspose, DepthToSpace,
SpaceToDepth, LayerNormalization and InstanceNormalization conformance tests.

Usage: make_op_models.py OUT_DIR

Writes OUT_DIR/<case>/model.onnx, input.npy and output.npy per case and
OUT_DIR/cases.txt (one case name a line). Expected outputs come from torch
(modules exported by torch.onnx at the opset in the case's name) or, for
models built with onnx.helper, from ONNX's own numpy reference
implementations (onnx/backend/test/case/node/*.py). Deterministic; skips all
work when OUT_DIR/cases.txt was written by this exact script.
"""

import hashlib
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

F = torch.nn.functional


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def torch_cases():
    """(name, module, input shape, opsets)."""
    torch.manual_seed(0)
    out = []

    def add(name, module, shape, opsets):
        out.append((name, module, shape, opsets))

    add("up_nearest_x2", torch.nn.Upsample(scale_factor=2, mode="nearest"), (1, 3, 5, 6),
        (9, 11, 13, 17))
    add("up_nearest_x3_1d", torch.nn.Upsample(scale_factor=3, mode="nearest"), (1, 2, 5), (11, 13))
    add("resize_nearest_size", Fn(lambda x: F.interpolate(x, size=(7, 9), mode="nearest")),
        (1, 2, 4, 5), (11, 13))
    add("resize_bilinear_x2", torch.nn.Upsample(scale_factor=2, mode="bilinear"), (1, 3, 5, 6),
        (11, 13, 17))
    add("resize_bilinear_ac", torch.nn.Upsample(scale_factor=2, mode="bilinear",
                                                align_corners=True), (1, 3, 5, 6), (11, 13, 17))
    add("resize_bilinear_down",
        Fn(lambda x: F.interpolate(x, size=(3, 4), mode="bilinear", align_corners=False)),
        (1, 2, 6, 9), (11, 13))
    add("resize_bilinear_ac_size",
        Fn(lambda x: F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=True)),
        (1, 2, 5, 7), (13,))
    add("convt_s2_p1_opad1", torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                      output_padding=1), (2, 4, 5, 7), (11, 13, 17))
    add("convt_groups_dil", torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                                     groups=2, dilation=(1, 2), bias=False),
        (1, 4, 6, 5), (13,))
    add("convt_depthwise", torch.nn.ConvTranspose2d(6, 6, 4, stride=2, padding=1, groups=6),
        (1, 6, 7, 7), (13,))
    add("convt_1d", torch.nn.ConvTranspose1d(3, 5, 4, stride=2, padding=1), (1, 3, 9), (13,))
    add("convt_row_blocks", torch.nn.ConvTranspose2d(64, 64, 4, stride=2, padding=1),
        (1, 64, 24, 24), (13,))
    add("pixel_shuffle", torch.nn.PixelShuffle(2), (1, 8, 3, 5), (11, 13, 17))
    add("layernorm", torch.nn.LayerNorm(16), (2, 5, 16), (11, 13, 17))
    add("layernorm_2d", torch.nn.LayerNorm([4, 6]), (2, 3, 4, 6), (11, 17))
    add("layernorm_plain", torch.nn.LayerNorm(12, elementwise_affine=False), (3, 12), (11, 13))
    add("instancenorm", torch.nn.InstanceNorm2d(4, affine=True), (2, 4, 5, 6), (11, 13, 17))
    add("groupnorm", torch.nn.GroupNorm(2, 6), (1, 6, 5, 5), (11, 13, 17))
    # A small convolutional autoencoder: ConvTranspose and Upsample decoder.
    autoencoder = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Upsample(scale_factor=2, mode="nearest"),
        torch.nn.Conv2d(8, 3, 3, padding=1), torch.nn.Sigmoid())
    add("autoencoder", autoencoder, (1, 3, 32, 32), (9, 13, 17))
    return out


def randomize(module, gen):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5 + (1.0 if p.dim() == 1 else 0.0))


def onnx_model(nodes, x_shape, y_shape, initializers, opset):
    graph = helper.make_graph(
        nodes, "case", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        initializer=initializers)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def helper_cases(rng):
    """(name, model, x, y) built with onnx.helper, ONNX's numpy references."""
    from onnx.backend.test.case.node.resize import interpolate_nd, linear_coeffs, nearest_coeffs
    from onnx.backend.test.case.node.depthtospace import __name__ as _  # noqa: F401 (exists)

    out = []
    x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    for coord in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        for nmode in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
            for scales in ((1.0, 1.0, 1.7, 0.6), (1.0, 1.0, 2.5, 1.5)):
                # The reference sees the model's float32 scales. Its
                # align_corners divides by in * scale unrounded where ONNX's
                # definition (and onnxruntime) use the output length: give
                # those cases sizes.
                f32_scales = np.array(scales, np.float32).astype(np.float64)
                sizes = np.floor(np.array(x.shape) * f32_scales).astype(np.int64)
                coeffs = lambda r, m=nmode: nearest_coeffs(r, mode=m)  # noqa: E731
                tag = f"{coord}_{nmode}_{'down' if scales[3] < 1 else 'up'}"
                if coord == "align_corners":
                    y = interpolate_nd(x, coeffs, output_size=sizes,
                                       coordinate_transformation_mode=coord)
                    inputs, init = ["x", "", "", "sizes"], numpy_helper.from_array(sizes, "sizes")
                else:
                    y = interpolate_nd(x, coeffs, scale_factors=f32_scales,
                                       coordinate_transformation_mode=coord)
                    inputs = ["x", "", "scales"]
                    init = numpy_helper.from_array(np.array(scales, np.float32), "scales")
                y = y.astype(np.float32)
                node = helper.make_node("Resize", inputs, ["y"], mode="nearest",
                                        coordinate_transformation_mode=coord, nearest_mode=nmode)
                m = onnx_model([node], x.shape, y.shape, [init], 13)
                out.append(("resize_nearest_" + tag + "_op13", m, x, y))
    for coord in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        for sizes in ((1, 2, 9, 4), (1, 2, 1, 11)):
            y = interpolate_nd(x, linear_coeffs, output_size=np.array(sizes),
                               coordinate_transformation_mode=coord).astype(np.float32)
            # Opset 11 requires roi and scales: empty tensors.
            node = helper.make_node("Resize", ["x", "roi", "no_scales", "sizes"], ["y"],
                                    mode="linear", coordinate_transformation_mode=coord)
            m = onnx_model([node], x.shape, y.shape,
                           [numpy_helper.from_array(np.array([], np.float32), "roi"),
                            numpy_helper.from_array(np.array([], np.float32), "no_scales"),
                            numpy_helper.from_array(np.array(sizes, np.int64), "sizes")], 11)
            out.append((f"resize_linear_{coord}_{sizes[2]}x{sizes[3]}_op11", m, x, y))
    # Upsample (opset 9) in linear mode: asymmetric coordinates.
    scales = (1.0, 1.0, 2.0, 3.0)
    y = interpolate_nd(x, linear_coeffs, scale_factors=np.array(scales),
                       coordinate_transformation_mode="asymmetric").astype(np.float32)
    node = helper.make_node("Upsample", ["x", "scales"], ["y"], mode="linear")
    m = onnx_model([node], x.shape, y.shape,
                   [numpy_helper.from_array(np.array(scales, np.float32), "scales")], 9)
    out.append(("upsample_linear_op9", m, x, y))
    # DepthToSpace (DCR, CRD) and SpaceToDepth: ONNX's reshape/transpose
    # definitions in numpy.
    d = rng.standard_normal((2, 12, 3, 4)).astype(np.float32)
    b = 2
    n, c, h, w = d.shape
    dcr = np.reshape(np.transpose(np.reshape(d, (n, b, b, c // 4, h, w)), (0, 3, 4, 1, 5, 2)),
                     (n, c // 4, h * b, w * b))
    crd = np.reshape(np.transpose(np.reshape(d, (n, c // 4, b, b, h, w)), (0, 1, 4, 2, 5, 3)),
                     (n, c // 4, h * b, w * b))
    for mode, y in (("DCR", dcr), ("CRD", crd)):
        node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)
        out.append((f"depth_to_space_{mode.lower()}_op13", onnx_model([node], d.shape, y.shape, [], 13),
                    d, y))
    s = rng.standard_normal((1, 3, 6, 9)).astype(np.float32)
    b = 3
    n, c, h, w = s.shape
    y = np.reshape(np.transpose(np.reshape(s, (n, c, h // b, b, w // b, b)), (0, 3, 5, 1, 2, 4)),
                   (n, c * b * b, h // b, w // b))
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)
    out.append(("space_to_depth_op11", onnx_model([node], s.shape, y.shape, [], 11), s, y))
    # ConvTranspose with output_shape and with auto_pad SAME_UPPER: the
    # reference is torch's conv_transpose2d over the pads ONNX's rule gives.
    xt = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    wt = (rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32)
    # Full output 9 x 11; ONNX's rule: total = full - out, SAME_UPPER puts
    # total / 2 at the begin, otherwise total - total / 2.
    full = torch.nn.functional.conv_transpose2d(torch.from_numpy(xt).double(),
                                                torch.from_numpy(wt).double(), stride=2)
    for name, attrs, crop in (
            ("convt_output_shape", dict(output_shape=[8, 10]), (1, 1, 0, 0)),
            ("convt_same_upper", dict(auto_pad="SAME_UPPER"), (0, 0, 1, 1))):
        t, l, bo, r = crop
        y = full[:, :, t:full.shape[2] - bo, l:full.shape[3] - r].numpy().astype(np.float32)
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], **attrs)
        m = onnx_model([node], xt.shape, y.shape, [numpy_helper.from_array(wt, "w")], 13)
        out.append((name + "_op13", m, xt, y))
    return out


def main():
    out_dir = sys.argv[1]
    digest = script_hash()
    try:
        with open(os.path.join(out_dir, "cases.txt")) as f:
            if f.readline().strip() == "# " + digest:
                return 0
    except OSError:
        pass
    tmp = out_dir + ".tmp%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(1)
    names = []
    for name, module, shape, opsets in torch_cases():
        randomize(module, gen)
        module.eval()
        x = torch.randn(shape, generator=gen)
        with torch.no_grad():
            y = module(x)
        for opset in opsets:
            case = f"{name}_op{opset}"
            d = os.path.join(tmp, case)
            os.makedirs(d)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(module, (x,), os.path.join(d, "model.onnx"),
                                  opset_version=opset, input_names=["x"], output_names=["y"])
            np.save(os.path.join(d, "input.npy"), x.numpy())
            np.save(os.path.join(d, "output.npy"), y.numpy())
            names.append(case)
    for case, m, x, y in helper_cases(np.random.default_rng(7)):
        d = os.path.join(tmp, case)
        os.makedirs(d)
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "input.npy"), x)
        np.save(os.path.join(d, "output.npy"), y)
        names.append(case)
    with open(os.path.join(tmp, "cases.txt"), "w") as f:
        f.write("# " + digest + "\n" + "\n".join(names) + "\n")
    old = out_dir + ".old%d" % os.getpid()
    if os.path.exists(out_dir):
        os.rename(out_dir, old)
    os.rename(tmp, out_dir)
    shutil.rmtree(old, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
