#include "baton/planner/passes/winograd_weights.h"

#include <cstring>

#include "baton/kernels.h"

namespace baton::planner {
namespace {

bool AllOnes(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != 1) return false;
  }
  return true;
}

// Index of the Conv's weights when it qualifies, else -1.
int QualifyingWeights(const Graph& g, const Node& node) {
  if (node.op != "Conv" || node.inputs.size() < 2 || node.inputs.size() > 4 ||
      node.outputs.size() != 1) {
    return -1;
  }
  const int xi = node.inputs[0], wi = node.inputs[1], yi = node.outputs[0];
  if (xi < 0 || wi < 0) return -1;
  const Tensor& x = g.tensors[xi];
  const Tensor& w = g.tensors[wi];
  const Tensor& y = g.tensors[yi];
  if (x.dtype != DType::Float32 || w.dtype != DType::Float32 || !w.is_constant ||
      w.data.size() != w.bytes() || !w.shape_known || !y.shape_known) {
    return -1;
  }
  if (w.shape.size() != 4 || w.shape[2] != 3 || w.shape[3] != 3 || y.shape.size() != 4 ||
      y.shape[1] != w.shape[0]) {
    return -1;
  }
  if (node.GetInt("group", 1) != 1 || !AllOnes(node.GetInts("strides")) ||
      !AllOnes(node.GetInts("dilations"))) {
    return -1;
  }
  if (!ConvTakesWinogradWeights(w.shape[1], w.shape[0], y.shape[2], y.shape[3])) return -1;
  return wi;
}

}  // namespace

std::vector<float> WinogradTransform(const std::vector<float>& w, int64_t m, int64_t c) {
  std::vector<float> u(static_cast<size_t>(16 * m * c));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* t = w.data() + (i * c + ch) * 9;
      float gg[4][3];  // G g
      for (int col = 0; col < 3; ++col) {
        const float a = t[col], b = t[3 + col], d = t[6 + col];
        gg[0][col] = a;
        gg[1][col] = 0.5f * (a + b + d);
        gg[2][col] = 0.5f * (a - b + d);
        gg[3][col] = d;
      }
      for (int r = 0; r < 4; ++r) {
        const float a = gg[r][0], b = gg[r][1], d = gg[r][2];
        const float row[4] = {a, 0.5f * (a + b + d), 0.5f * (a - b + d), d};
        for (int k = 0; k < 4; ++k) {
          u[static_cast<size_t>(((r * 4 + k) * m + i) * c + ch)] = row[k];
        }
      }
    }
  }
  return u;
}

Result<int> AddWinogradWeights(Graph* graph) {
  int added = 0;
  for (size_t n = 0; n < graph->nodes.size(); ++n) {
    const int wi = QualifyingWeights(*graph, graph->nodes[n]);
    if (wi < 0) continue;
    const Tensor& w = graph->tensors[wi];
    const int64_t m = w.shape[0], c = w.shape[1];
    const std::vector<float> u = WinogradTransform(w.FloatData(), m, c);
    Tensor t;
    t.name = graph->nodes[n].name + "/winograd_weights";
    if (graph->FindTensor(t.name) >= 0) {
      return Fail("node '" + graph->nodes[n].name + "': tensor '" + t.name + "' already exists");
    }
    t.dtype = DType::Float32;
    t.shape = {16, m, c};
    t.shape_known = true;
    t.is_constant = true;
    t.data.resize(u.size() * sizeof(float));
    std::memcpy(t.data.data(), u.data(), t.data.size());
    const int ui = graph->AddTensor(std::move(t));
    Node& node = graph->nodes[n];
    node.inputs.resize(4, -1);
    node.inputs.push_back(ui);
    ++added;
  }
  return added;
}

}  // namespace baton::planner
