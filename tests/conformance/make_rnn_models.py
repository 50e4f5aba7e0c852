#!/usr/bin/python3
"""Small LSTM and GRU models for the recurrent conformance tests.

Usage: make_rnn_models.py OUT_DIR

Writes OUT_DIR/<case>/model.onnx, input<k>.npy (one per graph input) and
output<k>.npy (one per graph output) per case, and OUT_DIR/cases.txt: a
hash line, then one line per case "<name> <inputs> <outputs>"; models the
planner must reject go to OUT_DIR/errors/, listed in OUT_DIR/errors.txt as
"<path> <part of the expected message>".

Two kinds of cases:
  - torch modules (nn.LSTM, nn.GRU: one or two layers, bidirectional,
    batch first, initial states, a keyword-spotting LSTM) exported by
    torch.onnx at opsets 11, 13 and 17; the expected outputs are torch's;
  - single LSTM/GRU nodes built with onnx.helper for what torch never
    exports (reverse direction, peepholes, GRU with linear_before_reset 0, a
    constant sequence_lens, an omitted Y, explicit default activations); the
    expected outputs come from the numpy implementation of ONNX's equations
    below, itself checked against ONNX's own LSTM_Helper and GRU_Helper on
    the forward cases those helpers cover.
Deterministic; skips all work when OUT_DIR/cases.txt was written by this
exact script; concurrent runs (the tests run in parallel) wait on
OUT_DIR.lock.
"""

import fcntl
import hashlib
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- numpy reference: ONNX's LSTM and GRU equations, default activations ----

def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm_ref(x, w, r, b=None, h0=None, c0=None, p=None, direction="forward"):
    """x [T,B,I], w [D,4H,I], r [D,4H,H], b [D,8H], h0/c0 [D,B,H], p [D,3H]
    -> y [T,D,B,H], y_h [D,B,H], y_c [D,B,H] (float64)."""
    x = x.astype(np.float64)
    t_len, batch, _ = x.shape
    dirs, gh, hidden = r.shape
    y = np.zeros((t_len, dirs, batch, hidden))
    y_h = np.zeros((dirs, batch, hidden))
    y_c = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        bias = np.zeros(2 * gh) if b is None else b[d].astype(np.float64)
        peep = np.zeros(3 * hidden) if p is None else p[d].astype(np.float64)
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(np.float64)
        reverse = direction == "reverse" or d == 1
        for s in range(t_len):
            t = t_len - 1 - s if reverse else s
            gates = x[t] @ w[d].T + h @ r[d].T + bias[:gh] + bias[gh:]
            gi, go, gf, gc = np.split(gates, 4, axis=-1)
            i = sigmoid(gi + peep[:hidden] * c)
            f = sigmoid(gf + peep[2 * hidden:] * c)
            c = f * c + i * np.tanh(gc)
            o = sigmoid(go + peep[hidden:2 * hidden] * c)
            h = o * np.tanh(c)
            y[t, d] = h
        y_h[d], y_c[d] = h, c
    return y, y_h, y_c


def gru_ref(x, w, r, b=None, h0=None, direction="forward", linear_before_reset=0):
    x = x.astype(np.float64)
    t_len, batch, _ = x.shape
    dirs, gh, hidden = r.shape
    y = np.zeros((t_len, dirs, batch, hidden))
    y_h = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        bias = np.zeros(2 * gh) if b is None else b[d].astype(np.float64)
        wb, rb = bias[:gh], bias[gh:]
        wz, wr, wh = np.split(w[d].astype(np.float64), 3)
        rz, rr, rh = np.split(r[d].astype(np.float64), 3)
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        reverse = direction == "reverse" or d == 1
        for s in range(t_len):
            t = t_len - 1 - s if reverse else s
            z = sigmoid(x[t] @ wz.T + h @ rz.T + wb[:hidden] + rb[:hidden])
            rg = sigmoid(x[t] @ wr.T + h @ rr.T + wb[hidden:2 * hidden] + rb[hidden:2 * hidden])
            if linear_before_reset:
                n = np.tanh(x[t] @ wh.T + rg * (h @ rh.T + rb[2 * hidden:]) + wb[2 * hidden:])
            else:
                n = np.tanh(x[t] @ wh.T + (rg * h) @ rh.T + rb[2 * hidden:] + wb[2 * hidden:])
            h = (1 - z) * n + z * h
            y[t, d] = h
        y_h[d] = h
    return y, y_h


def check_reference(rng):
    """Our numpy equations against ONNX's own helpers (forward, one direction)."""
    from onnx.backend.test.case.node.gru import GRU_Helper
    from onnx.backend.test.case.node.lstm import LSTM_Helper
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    w = rng.standard_normal((1, 20, 3)).astype(np.float32)
    r = rng.standard_normal((1, 20, 5)).astype(np.float32)
    b = rng.standard_normal((1, 40)).astype(np.float32)
    p = rng.standard_normal((1, 15)).astype(np.float32)
    _, y_h = LSTM_Helper(X=x, W=w, R=r, B=b, P=p).step()
    assert np.allclose(lstm_ref(x, w, r, b, p=p)[1][0], y_h, atol=1e-5)
    for lbr in (0, 1):
        w3, r3, b3 = w[:, :15], r[:, :15], np.concatenate([b[:, :15], b[:, 20:35]], axis=1)
        _, y_h = GRU_Helper(X=x, W=w3, R=r3, B=b3, linear_before_reset=lbr).step()
        assert np.allclose(gru_ref(x, w3, r3, b3, linear_before_reset=lbr)[1][0], y_h, atol=1e-5)


# ---- torch cases ----

class Seq(torch.nn.Module):
    """An RNN returning its output and final states (as a tuple, flattened)."""

    def __init__(self, rnn, with_state=False):
        super().__init__()
        self.rnn = rnn
        self.with_state = with_state
        if with_state:
            layers = rnn.num_layers * (2 if rnn.bidirectional else 1)
            g = torch.Generator().manual_seed(5)
            self.register_buffer("h0", torch.randn(layers, 1, rnn.hidden_size, generator=g))
            if isinstance(rnn, torch.nn.LSTM):
                self.register_buffer("c0", torch.randn(layers, 1, rnn.hidden_size, generator=g))

    def forward(self, x):
        if not self.with_state:
            out, state = self.rnn(x)
        elif isinstance(self.rnn, torch.nn.LSTM):
            out, state = self.rnn(x, (self.h0, self.c0))
        else:
            out, state = self.rnn(x, self.h0)
        if isinstance(state, tuple):
            return (out,) + state
        return out, state


class KeywordLstm(torch.nn.Module):
    """Keyword spotting: 49 frames of 40 MFCCs, two LSTM layers, 12 classes."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(40, 64, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(64, 12)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def torch_cases():
    """(name, module, input shape, opsets)."""
    torch.manual_seed(0)
    return [
        ("lstm_1layer", Seq(torch.nn.LSTM(10, 16)), (7, 2, 10), (11, 13, 17)),
        ("lstm_2layer_bidir", Seq(torch.nn.LSTM(8, 12, num_layers=2, bidirectional=True)),
         (5, 1, 8), (11, 13, 17)),
        ("lstm_batch_first_state", Seq(torch.nn.LSTM(6, 9, batch_first=True), with_state=True),
         (1, 6, 6), (13,)),
        ("gru_1layer", Seq(torch.nn.GRU(10, 16)), (7, 2, 10), (11, 13, 17)),
        ("gru_2layer_bidir_state",
         Seq(torch.nn.GRU(8, 12, num_layers=2, bidirectional=True), with_state=True),
         (5, 1, 8), (13, 17)),
        ("kws_lstm", KeywordLstm(), (1, 49, 40), (13,)),
    ]


def rnn_node_model(op, x, params, outputs, attrs, opset=14):
    """One LSTM/GRU node; params: list of (input name, array or None)."""
    inits, names = [], ["x"]
    for name, value in params:
        if value is None:
            names.append("")
        else:
            names.append(name)
            inits.append(numpy_helper.from_array(value, name))
    while names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, [o for o, _ in outputs], name=op.lower(), **attrs)
    graph = helper.make_graph(
        [node], "case", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, s) for o, s in outputs if o],
        initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def helper_cases(rng):
    """(name, model, [inputs], [outputs])."""
    out = []
    f32 = np.float32

    def rand(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(f32)

    T, B, I, H = 6, 3, 5, 7
    x = rand(T, B, I)
    # LSTM, reverse, peepholes, bias and initial states.
    w, r, b, p = rand(1, 4 * H, I), rand(1, 4 * H, H), rand(1, 8 * H), rand(1, 3 * H)
    h0, c0 = rand(1, B, H), rand(1, B, H)
    y, y_h, y_c = lstm_ref(x, w, r, b, h0, c0, p, direction="reverse")
    m = rnn_node_model("LSTM", x, [("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0),
                                   ("c0", c0), ("p", p)],
                       [("y", y.shape), ("y_h", y_h.shape), ("y_c", y_c.shape)],
                       dict(hidden_size=H, direction="reverse"))
    out.append(("lstm_reverse_peephole", m, [x], [y, y_h, y_c]))
    # LSTM, bidirectional, no bias, a constant sequence_lens of T, explicit
    # default activations, Y omitted (only Y_h read).
    w, r = rand(2, 4 * H, I), rand(2, 4 * H, H)
    lens = np.full((B,), T, np.int32)
    _, y_h, _ = lstm_ref(x, w, r, direction="bidirectional")
    m = rnn_node_model("LSTM", x, [("w", w), ("r", r), ("b", None), ("lens", lens)],
                       [("", None), ("y_h", y_h.shape)],
                       dict(hidden_size=H, direction="bidirectional",
                            activations=["Sigmoid", "Tanh", "Tanh"] * 2))
    out.append(("lstm_bidir_lens_no_y", m, [x], [y_h]))
    # GRU, linear_before_reset 0 (torch always exports 1), forward and reverse.
    for direction in ("forward", "reverse"):
        w, r, b, h0 = rand(1, 3 * H, I), rand(1, 3 * H, H), rand(1, 6 * H), rand(1, B, H)
        y, y_h = gru_ref(x, w, r, b, h0, direction=direction, linear_before_reset=0)
        m = rnn_node_model("GRU", x, [("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0)],
                           [("y", y.shape), ("y_h", y_h.shape)],
                           dict(hidden_size=H, direction=direction))
        out.append((f"gru_lbr0_{direction}", m, [x], [y, y_h]))
    # GRU, bidirectional, linear_before_reset 1, no initial state.
    w, r, b = rand(2, 3 * H, I), rand(2, 3 * H, H), rand(2, 6 * H)
    y, y_h = gru_ref(x, w, r, b, direction="bidirectional", linear_before_reset=1)
    m = rnn_node_model("GRU", x, [("w", w), ("r", r), ("b", b)],
                       [("y", y.shape), ("y_h", y_h.shape)],
                       dict(hidden_size=H, direction="bidirectional", linear_before_reset=1))
    out.append(("gru_bidir_lbr1", m, [x], [y, y_h]))
    return out


def error_cases(rng):
    """(name, model, message the planner's error must contain)."""
    T, B, I, H = 4, 2, 3, 5
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    w = rng.standard_normal((1, 4 * H, I)).astype(np.float32)
    r = rng.standard_normal((1, 4 * H, H)).astype(np.float32)
    outs = [("y", (T, 1, B, H))]
    short = np.array([T, T - 1], np.int32)
    return [
        ("variable_lengths",
         rnn_node_model("LSTM", x, [("w", w), ("r", r), ("b", None), ("lens", short)], outs,
                        dict(hidden_size=H)),
         "variable lengths are not supported"),
        ("clip", rnn_node_model("LSTM", x, [("w", w), ("r", r)], outs,
                                dict(hidden_size=H, clip=3.0)),
         "cell clip attribute is not supported"),
        ("activations", rnn_node_model("LSTM", x, [("w", w), ("r", r)], outs,
                                       dict(hidden_size=H, activations=["Sigmoid", "Relu", "Tanh"])),
         "activations 'Sigmoid,Relu,Tanh' are not supported"),
        ("hidden_size", rnn_node_model("LSTM", x, [("w", w), ("r", r)], outs,
                                       dict(hidden_size=H + 1)),
         "hidden_size 6 does not match R"),
    ]


def save_case(tmp, case, model_bytes, inputs, outputs, lines):
    d = os.path.join(tmp, case)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model_bytes)
    for k, v in enumerate(inputs):
        np.save(os.path.join(d, f"input{k}.npy"), np.ascontiguousarray(v, np.float32))
    for k, v in enumerate(outputs):
        np.save(os.path.join(d, f"output{k}.npy"), np.ascontiguousarray(v, np.float32))
    lines.append(f"{case} {len(inputs)} {len(outputs)}")


def main():
    out_dir = sys.argv[1]
    # The tests of one binary run in parallel (ctest -j), each calling this
    # script: one generates while the others wait on the lock, then find the
    # cases written and return without touching them.
    os.makedirs(os.path.dirname(os.path.abspath(out_dir)), exist_ok=True)
    with open(out_dir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return generate(out_dir)


def generate(out_dir):
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
    rng = np.random.default_rng(7)
    check_reference(rng)
    lines = []
    gen = torch.Generator().manual_seed(3)
    for name, module, shape, opsets in torch_cases():
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.4)
        module.eval()
        x = torch.randn(shape, generator=gen)
        with torch.no_grad():
            y = module(x)
        ys = [t.numpy() for t in (y if isinstance(y, tuple) else (y,))]
        for opset in opsets:
            import io
            buf = io.BytesIO()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(module, x, buf, opset_version=opset, input_names=["x"],
                                  output_names=[f"y{k}" for k in range(len(ys))])
            save_case(tmp, f"{name}_op{opset}", buf.getvalue(), [x.numpy()], ys, lines)
    for name, model, inputs, outputs in helper_cases(rng):
        save_case(tmp, name, model.SerializeToString(), inputs, outputs, lines)
    errors = []
    os.makedirs(os.path.join(tmp, "errors"))
    for name, model, message in error_cases(rng):
        path = os.path.join(out_dir, "errors", name + ".onnx")
        with open(os.path.join(tmp, "errors", name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        errors.append(f"{path} {message}")
    with open(os.path.join(tmp, "errors.txt"), "w") as f:
        f.write("\n".join(errors) + "\n")
    with open(os.path.join(tmp, "cases.txt"), "w") as f:
        f.write("# " + digest + "\n" + "\n".join(lines) + "\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
