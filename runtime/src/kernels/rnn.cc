// LSTM and GRU (ONNX layout 0), float32, forward, reverse or bidirectional,
// with the default activations (sigmoid gates, tanh cell and hidden), the
// optional bias, initial states and (LSTM) peepholes. The sequence length is
// static: a sequence_lens input, when present, must hold T for every batch
// item (the planner checks this too).
//
//   inputs : X [T, B, I], W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H],
//            sequence_lens [B] (int32), initial_h [D, B, H],
//            LSTM: initial_c [D, B, H], P [D, 3*H]
//   outputs: Y [T, D, B, H], Y_h [D, B, H], LSTM: Y_c [D, B, H]
//   G = 4 (LSTM gates i, o, f, c) or 3 (GRU gates z, r, h)
//   params : AxisParams.axis = direction (0 forward, 1 reverse,
//            2 bidirectional) + 4 if GRU's linear_before_reset
//
// Per direction, the input projection of every time step is one GEMM
// through the GEMM core (X [T*B x I] times W^T into xw [T*B x G*H]); each
// step then adds the recurrent product h R^T (Gemv: one dot product per gate
// row of R, read in place) and applies the gate equations:
//   LSTM: i = s(xw_i + hR_i + Wb_i + Rb_i + P_i c)   f likewise with P_f
//         g = tanh(xw_c + hR_c + Wb_c + Rb_c)        c' = f c + i g
//         o = s(xw_o + hR_o + Wb_o + Rb_o + P_o c')  h' = o tanh(c')
//   GRU:  z = s(xw_z + hR_z + Wb_z + Rb_z)           r likewise
//         n = tanh(xw_h + (r h) R_h + Rb_h + Wb_h)   (linear_before_reset 0)
//         n = tanh(xw_h + r (h R_h + Rb_h) + Wb_h)   (linear_before_reset 1)
//         h' = (1 - z) n + z h
//
//   workspace: [ GEMM packing buffers ][ xw: T*B*G*H ][ h: B*H ][ c: B*H ]
//              [ rec: G*H ][ rh: H ]            (floats, 16-byte aligned)
// The gate passes are loops over H with the branch-free sigmoid and tanh of
// kernel_math.h (about 2e-7 relative error), which vectorize.

#include <string.h>

#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_math.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

struct RnnGeom {
  bool lstm = true;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 4;
  int direction = 0;  // 0 forward, 1 reverse, 2 bidirectional
  bool linear_before_reset = false;
};

// True if `t` is absent or has exactly the dims given.
bool AbsentOr(const TensorArg& t, int64_t d0, int64_t d1, int64_t d2, uint32_t rank) {
  if (!t.present()) return true;
  if (t.rank() != rank) return false;
  const int64_t dims[3] = {d0, d1, d2};
  for (uint32_t i = 0; i < rank; ++i) {
    if (t.dim(i) != dims[i]) return false;
  }
  return true;
}

Status ParseRnn(const KernelCall& call, bool lstm, RnnGeom* out) {
  RnnGeom g;
  g.lstm = lstm;
  g.gates = lstm ? 4 : 3;
  const uint32_t max_inputs = lstm ? 8 : 6;
  const uint32_t max_outputs = lstm ? 3 : 2;
  BATON_KCHECK(call.num_outputs >= 1 && call.num_outputs <= max_outputs,
               "wrong number of outputs");
  for (uint32_t i = 0; i < call.num_inputs; ++i) {
    const TensorArg& t = call.inputs[i];
    if (!t.present()) continue;
    BATON_KCHECK(t.dtype() == (i == 4 ? DType::Int32 : DType::Float32),
                 "recurrent inputs must be float32 (sequence_lens int32)");
  }
  BATON_RETURN_IF_ERROR(CheckArity(call, 3, max_inputs, call.num_outputs));
  for (uint32_t i = 0; i < call.num_outputs; ++i) {
    BATON_KCHECK(call.outputs[i].dtype() == DType::Float32, "output must be float32");
  }
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(p != nullptr && p->axis() >= 0 && (p->axis() & 3) <= 2 && p->axis() < 8 &&
                   (!lstm || p->axis() < 4),
               "recurrent op needs AxisParams{direction + 4 * linear_before_reset}");
  g.direction = p->axis() & 3;
  g.linear_before_reset = (p->axis() & 4) != 0;
  g.dirs = g.direction == 2 ? 2 : 1;
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[1];
  const TensorArg& r = call.inputs[2];
  BATON_KCHECK(x.rank() == 3 && w.rank() == 3 && r.rank() == 3,
               "recurrent X, W and R must have rank 3");
  g.seq = x.dim(0);
  g.batch = x.dim(1);
  g.input = x.dim(2);
  g.hidden = r.dim(2);
  const int64_t gh = g.gates * g.hidden;
  BATON_KCHECK(AbsentOr(w, g.dirs, gh, g.input, 3) && AbsentOr(r, g.dirs, gh, g.hidden, 3),
               "recurrent W must be [D, G*H, I] and R [D, G*H, H]");
  BATON_KCHECK(AbsentOr(Input(call, 3), g.dirs, 2 * gh, 0, 2), "recurrent B must be [D, 2*G*H]");
  BATON_KCHECK(AbsentOr(Input(call, 4), g.batch, 0, 0, 1), "sequence_lens must be [B]");
  BATON_KCHECK(AbsentOr(Input(call, 5), g.dirs, g.batch, g.hidden, 3),
               "initial_h must be [D, B, H]");
  if (lstm) {
    BATON_KCHECK(AbsentOr(Input(call, 6), g.dirs, g.batch, g.hidden, 3),
                 "initial_c must be [D, B, H]");
    BATON_KCHECK(AbsentOr(Input(call, 7), g.dirs, 3 * g.hidden, 0, 2), "P must be [D, 3*H]");
  }
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(y.rank() == 4 && y.dim(0) == g.seq && y.dim(1) == g.dirs && y.dim(2) == g.batch &&
                   y.dim(3) == g.hidden,
               "recurrent Y must be [T, D, B, H]");
  for (uint32_t i = 1; i < call.num_outputs; ++i) {
    BATON_KCHECK(AbsentOr(call.outputs[i], g.dirs, g.batch, g.hidden, 3),
                 "recurrent Y_h and Y_c must be [D, B, H]");
  }
  *out = g;
  return Status::Ok();
}

size_t Align64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }

size_t GemmPart(const RnnGeom& g) {
  return Align64(GemmWorkspaceBytes(g.seq * g.batch, g.gates * g.hidden, g.input));
}

size_t WorkspaceFor(const RnnGeom& g) {
  const int64_t gh = g.gates * g.hidden;
  const int64_t floats = g.seq * g.batch * gh + 2 * g.batch * g.hidden + gh + g.hidden;
  return GemmPart(g) + static_cast<size_t>(floats) * sizeof(float);
}

Status RnnPrepare(const KernelCall& call, bool lstm) {
  RnnGeom g;
  BATON_RETURN_IF_ERROR(ParseRnn(call, lstm, &g));
  return CheckWorkspace(call, WorkspaceFor(g));
}

Status LstmPrepare(const KernelCall& call) { return RnnPrepare(call, true); }
Status GruPrepare(const KernelCall& call) { return RnnPrepare(call, false); }

size_t RnnWorkspaceBytes(const KernelCall& call, bool lstm) {
  RnnGeom g;
  if (!ParseRnn(call, lstm, &g).ok()) return 0;
  return WorkspaceFor(g);
}
size_t LstmWorkspaceBytes(const KernelCall& call) { return RnnWorkspaceBytes(call, true); }
size_t GruWorkspaceBytes(const KernelCall& call) { return RnnWorkspaceBytes(call, false); }

// In place over n floats; vectorized (kernel_math.h, -fno-trapping-math).
void SigmoidInPlace(float* v, int64_t n) { SigmoidRow(v, v, n); }
void TanhInPlace(float* v, int64_t n) {
  for (int64_t j = 0; j < n; ++j) v[j] = TanhF(v[j]);
}

// Pointers of one direction's parameters (null when absent).
struct DirParams {
  const float* w = nullptr;
  const float* r = nullptr;
  const float* wb = nullptr;  // input bias [G*H], then the recurrent bias
  const float* rb = nullptr;
  const float* h0 = nullptr;
  const float* c0 = nullptr;
  const float* peep = nullptr;  // i, o, f
};

DirParams ParamsOf(const KernelCall& call, const RnnGeom& g, int64_t d) {
  const int64_t gh = g.gates * g.hidden;
  const int64_t bh = g.batch * g.hidden;
  DirParams p;
  p.w = call.inputs[1].f32() + d * gh * g.input;
  p.r = call.inputs[2].f32() + d * gh * g.hidden;
  const TensorArg& b = Input(call, 3);
  if (b.present()) {
    p.wb = b.f32() + d * 2 * gh;
    p.rb = p.wb + gh;
  }
  const TensorArg& h0 = Input(call, 5);
  if (h0.present()) p.h0 = h0.f32() + d * bh;
  if (g.lstm) {
    const TensorArg& c0 = Input(call, 6);
    if (c0.present()) p.c0 = c0.f32() + d * bh;
    const TensorArg& peep = Input(call, 7);
    if (peep.present()) p.peep = peep.f32() + d * 3 * g.hidden;
  }
  return p;
}

// One LSTM step for one batch item: rec holds h R^T + xw + biases
// (gates i, o, f, c); updates c and h in place. `tmp` holds H floats. Each
// pass is one loop over H that vectorizes.
void LstmCell(float* rec, const float* peep, int64_t hidden, float* c, float* h, float* tmp) {
  float* gi = rec;
  float* go = rec + hidden;
  float* gf = rec + 2 * hidden;
  float* gc = rec + 3 * hidden;
  if (peep != nullptr) {
    for (int64_t j = 0; j < hidden; ++j) {
      gi[j] += peep[j] * c[j];
      gf[j] += peep[2 * hidden + j] * c[j];
    }
  }
  SigmoidInPlace(gi, hidden);
  SigmoidInPlace(gf, hidden);
  TanhInPlace(gc, hidden);
  for (int64_t j = 0; j < hidden; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  if (peep != nullptr) {
    for (int64_t j = 0; j < hidden; ++j) go[j] += peep[hidden + j] * c[j];
  }
  SigmoidInPlace(go, hidden);
  for (int64_t j = 0; j < hidden; ++j) tmp[j] = c[j];
  TanhInPlace(tmp, hidden);
  for (int64_t j = 0; j < hidden; ++j) h[j] = go[j] * tmp[j];
}

// Runs direction d over all steps, writing Y's slices and leaving the final
// states in h and c.
void RunDirection(const KernelCall& call, const RnnGeom& g, int64_t d, bool reverse, float* ws) {
  const int64_t H = g.hidden;
  const int64_t gh = g.gates * H;
  const int64_t bh = g.batch * H;
  const DirParams p = ParamsOf(call, g, d);
  float* gemm_ws = ws;
  float* xw = ws + GemmPart(g) / sizeof(float);
  float* h = xw + g.seq * g.batch * gh;
  float* c = h + bh;
  float* rec = c + bh;
  float* rh = rec + gh;

  // xw[t*B + b][j] = sum_k X[t][b][k] * W[j][k] (+ both biases, added below).
  const StridedMatrix a{call.inputs[0].f32(), g.input, 1};
  const StridedMatrix wt{p.w, 1, g.input};  // W^T: element (k, j) = W[j][k]
  const GemmEpilogue plain;
  GemmPacked(g.seq * g.batch, gh, g.input, 1.0f, a, PackBStrided, &wt, xw, gh, plain, gemm_ws);
  if (p.wb != nullptr) {
    const bool fold_rb = g.lstm || !g.linear_before_reset;
    for (int64_t row = 0; row < g.seq * g.batch; ++row) {
      float* x = xw + row * gh;
      for (int64_t j = 0; j < gh; ++j) x[j] += p.wb[j];
      // Rb_h stays inside r (...) for GRU with linear_before_reset.
      const int64_t rb_end = fold_rb ? gh : 2 * H;
      for (int64_t j = 0; j < rb_end; ++j) x[j] += p.rb[j];
    }
  }
  if (p.h0 != nullptr) {
    memcpy(h, p.h0, static_cast<size_t>(bh) * sizeof(float));
  } else {
    memset(h, 0, static_cast<size_t>(bh) * sizeof(float));
  }
  if (g.lstm) {
    if (p.c0 != nullptr) {
      memcpy(c, p.c0, static_cast<size_t>(bh) * sizeof(float));
    } else {
      memset(c, 0, static_cast<size_t>(bh) * sizeof(float));
    }
  }

  float* y = call.outputs[0].f32();
  GemmEpilogue acc;
  acc.accumulate = true;
  const StridedMatrix rt{p.r, 1, H};  // R^T, read as one dot product per row of R
  for (int64_t s = 0; s < g.seq; ++s) {
    const int64_t t = reverse ? g.seq - 1 - s : s;
    for (int64_t b = 0; b < g.batch; ++b) {
      float* hb = h + b * H;
      const float* xrow = xw + (t * g.batch + b) * gh;
      if (g.lstm) {
        memcpy(rec, xrow, static_cast<size_t>(gh) * sizeof(float));
        Gemv(gh, H, 1.0f, hb, 1, rt, rec, acc);
        LstmCell(rec, p.peep, H, c + b * H, hb, rh);
      } else {
        // z and r: x part + h R^T.
        memcpy(rec, xrow, static_cast<size_t>(2 * H) * sizeof(float));
        Gemv(2 * H, H, 1.0f, hb, 1, rt, rec, acc);
        float* z = rec;
        float* r = rec + H;
        SigmoidInPlace(rec, 2 * H);
        float* n = rec + 2 * H;
        const StridedMatrix rt_h{p.r + 2 * H * H, 1, H};
        const GemmEpilogue fresh;
        if (g.linear_before_reset) {
          Gemv(H, H, 1.0f, hb, 1, rt_h, n, fresh);
          const float* rbh = p.rb != nullptr ? p.rb + 2 * H : nullptr;
          if (rbh != nullptr) {
            for (int64_t j = 0; j < H; ++j) n[j] += rbh[j];
          }
          for (int64_t j = 0; j < H; ++j) n[j] = xrow[2 * H + j] + r[j] * n[j];
          TanhInPlace(n, H);
        } else {
          for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * hb[j];
          Gemv(H, H, 1.0f, rh, 1, rt_h, n, fresh);
          for (int64_t j = 0; j < H; ++j) n[j] += xrow[2 * H + j];
          TanhInPlace(n, H);
        }
        for (int64_t j = 0; j < H; ++j) hb[j] = (1.0f - z[j]) * n[j] + z[j] * hb[j];
      }
      memcpy(y + ((t * g.dirs + d) * g.batch + b) * H, hb, static_cast<size_t>(H) * sizeof(float));
    }
  }
}

Status RnnEval(const KernelCall& call, bool lstm) {
  RnnGeom g;
  BATON_RETURN_IF_ERROR(ParseRnn(call, lstm, &g));
  const TensorArg& lens = Input(call, 4);
  if (lens.present()) {
    const int32_t* v = static_cast<const int32_t*>(lens.data);
    for (int64_t b = 0; b < g.batch; ++b) {
      BATON_KCHECK(v[b] == g.seq, "sequence_lens must equal the sequence length");
    }
  }
  float* ws = WorkspaceF32(call);
  const int64_t bh = g.batch * g.hidden;
  float* h = ws + GemmPart(g) / sizeof(float) + g.seq * g.batch * g.gates * g.hidden;
  for (int64_t d = 0; d < g.dirs; ++d) {
    RunDirection(call, g, d, g.direction == 1 || d == 1, ws);
    for (uint32_t o = 1; o < call.num_outputs; ++o) {
      // Y_h, then Y_c: the final states of this direction.
      memcpy(call.outputs[o].f32() + d * bh, h + (o - 1) * bh,
             static_cast<size_t>(bh) * sizeof(float));
    }
  }
  return Status::Ok();
}

Status LstmEval(const KernelCall& call) { return RnnEval(call, true); }
Status GruEval(const KernelCall& call) { return RnnEval(call, false); }

}  // namespace

constexpr KernelEntry kRnnEntries[] = {
    {Op::LSTM, kAllDeviceKinds, LstmPrepare, LstmEval, LstmWorkspaceBytes},
    {Op::GRU, kAllDeviceKinds, GruPrepare, GruEval, GruWorkspaceBytes},
};
BATON_KERNEL_FAMILY(Rnn, kRnnEntries);

}  // namespace kernels
}  // namespace baton
