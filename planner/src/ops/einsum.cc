// Einsum (float32, one or two operands). There is no Einsum kernel: after
// shape inference the simplifier lowers each node (LowerEinsum) into ops
// every port and device already runs: ReduceSum for labels only one operand
// has, Transpose and Reshape to bring both operands to [batch..., M, K] and
// [batch..., K, N], MatMul (the GEMM core) for the contraction, or Mul when
// nothing is contracted, then Reshape and Transpose to the output's order.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <numeric>

#include "baton/planner/import/simplify.h"
#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

using Shape = std::vector<int64_t>;

// Labels are letters; the dims an ellipsis stands for get labels 256 + k,
// k counted from the innermost of the widest ellipsis, so that operands with
// fewer ellipsis dims align to the right (numpy broadcasting).
using Labels = std::vector<int>;
constexpr int kEllipsisBase = 256;

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

// Parses `equation` for operands of the given ranks. Errors are messages
// without the node prefix.
Result<Equation> ParseEquation(const std::string& equation, const std::vector<size_t>& ranks) {
  std::string eq;
  for (char ch : equation) {
    if (ch != ' ') eq += ch;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() > 2) {
    return Fail("Einsum '" + equation + "' has " + std::to_string(terms.size()) +
                " operands; Baton supports 1 or 2");
  }
  if (terms.size() != ranks.size()) {
    return Fail("Einsum '" + equation + "' names " + std::to_string(terms.size()) +
                " operands but the node has " + std::to_string(ranks.size()) + " inputs");
  }
  Equation out;
  int max_ellipsis = 0;
  std::map<int, int> count;  // occurrences of each label over all operands
  // Parses one term; `rank` < 0 for the output (ellipsis = max_ellipsis dims).
  auto parse_term = [&](const std::string& term, int64_t rank, Labels* labels) -> Check {
    const size_t dots = term.find("...");
    if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos) {
      return Fail("Einsum '" + equation + "': term '" + term + "' has two ellipses");
    }
    int letters = 0;
    for (char ch : term) {
      if (ch == '.') continue;
      if (!std::isalpha(static_cast<unsigned char>(ch))) {
        return Fail("Einsum '" + equation + "': unexpected character '" + std::string(1, ch) + "'");
      }
      ++letters;
    }
    int ellipsis = 0;
    if (dots != std::string::npos) {
      ellipsis = rank < 0 ? max_ellipsis : static_cast<int>(rank) - letters;
      if (ellipsis < 0) {
        return Fail("Einsum '" + equation + "': term '" + term + "' has more labels than its operand's rank " +
                    std::to_string(rank));
      }
    } else if (rank >= 0 && letters != rank) {
      return Fail("Einsum '" + equation + "': term '" + term + "' has " + std::to_string(letters) +
                  " labels but its operand has rank " + std::to_string(rank));
    }
    max_ellipsis = std::max(max_ellipsis, ellipsis);
    for (size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        for (int k = ellipsis - 1; k >= 0; --k) labels->push_back(kEllipsisBase + k);
        i += 2;
        continue;
      }
      const int label = static_cast<unsigned char>(term[i]);
      if (std::find(labels->begin(), labels->end(), label) != labels->end()) {
        return Fail("Einsum '" + equation + "': label '" + std::string(1, term[i]) +
                    "' repeats within term '" + term +
                    "' (diagonals and traces are not supported)");
      }
      labels->push_back(label);
    }
    return Check();
  };
  for (size_t k = 0; k < terms.size(); ++k) {
    Labels labels;
    BATON_TRY(parse_term(terms[k], static_cast<int64_t>(ranks[k]), &labels));
    for (int l : labels) ++count[l];
    out.inputs.push_back(std::move(labels));
  }
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the labels used once, sorted.
    for (int k = max_ellipsis - 1; k >= 0; --k) out.output.push_back(kEllipsisBase + k);
    for (const auto& [label, n] : count) {
      if (label < kEllipsisBase && n == 1) out.output.push_back(label);
    }
  } else {
    const std::string rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos) {
      return Fail("Einsum '" + equation + "': malformed output term '" + rhs + "'");
    }
    BATON_TRY(parse_term(rhs, -1, &out.output));
    for (int l : out.output) {
      if (!count.count(l)) {
        return Fail("Einsum '" + equation + "': output label '" + std::string(1, static_cast<char>(l)) +
                    "' is in no operand");
      }
    }
  }
  return out;
}

std::vector<size_t> RanksOf(const Graph& graph, const Node& node) {
  std::vector<size_t> ranks;
  for (int t : node.inputs) ranks.push_back(graph.tensors[t].shape.size());
  return ranks;
}

// The size of every label: operands broadcast (1 against n).
Result<std::map<int, int64_t>> LabelSizes(const Equation& e, const std::vector<const Shape*>& shapes,
                                          const std::string& equation) {
  std::map<int, int64_t> size;
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    for (size_t d = 0; d < e.inputs[k].size(); ++d) {
      const int l = e.inputs[k][d];
      const int64_t s = (*shapes[k])[d];
      auto it = size.find(l);
      if (it == size.end() || it->second == 1) {
        size[l] = s;
      } else if (s != 1 && s != it->second) {
        return Fail("Einsum '" + equation + "': a label has sizes " + std::to_string(it->second) +
                    " and " + std::to_string(s));
      }
    }
  }
  return size;
}

Check InferEinsum(InferContext& c) {
  const std::string equation = c.node().GetString("equation", "");
  if (equation.empty()) return c.Err("needs a string attribute 'equation'");
  std::vector<size_t> ranks;
  std::vector<const Shape*> shapes;
  for (int i = 0; i < c.NumInputs(); ++i) {
    BATON_TRY(c.RequireFloat(i));
    ranks.push_back(c.Rank(i));
    shapes.push_back(&c.S(i));
  }
  auto e = ParseEquation(equation, ranks);
  if (!e.ok()) return c.Err(e.error());
  auto sizes = LabelSizes(*e, shapes, equation);
  if (!sizes.ok()) return c.Err(sizes.error());
  Shape out;
  for (int l : e->output) out.push_back(sizes->at(l));
  c.Output(DType::Float32, out);
  return Check();
}

const OpDef kOps[] = {
    {"Einsum", 1, kUnbounded, 1, 1, InferEinsum, false, schema::Op::Copy, 1, nullptr, nullptr, nullptr, false},
};

// ---- Lowering ----

class Lowerer {
 public:
  Lowerer(Graph* graph, const Node& einsum) : graph_(graph), einsum_(einsum) {}

  // The nodes that compute `einsum_`'s output.
  Result<std::vector<Node>> Run() {
    const std::string equation = einsum_.GetString("equation", "");
    auto parsed = ParseEquation(equation, RanksOf(*graph_, einsum_));
    if (!parsed.ok()) return Err(parsed.error());
    const Equation& e = *parsed;
    std::vector<const Shape*> shapes;
    for (int t : einsum_.inputs) shapes.push_back(&graph_->tensors[t].shape);
    auto sizes = LabelSizes(e, shapes, equation);
    if (!sizes.ok()) return Err(sizes.error());
    sizes_ = *sizes;
    const auto in_out = [&](int l) {
      return std::find(e.output.begin(), e.output.end(), l) != e.output.end();
    };
    // Labels of one operand only, not in the output: summed first.
    std::vector<int> x(e.inputs.size());
    std::vector<Labels> labels = e.inputs;
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      x[k] = einsum_.inputs[k];
      std::vector<int64_t> axes;
      Labels kept;
      for (size_t d = 0; d < labels[k].size(); ++d) {
        const int l = labels[k][d];
        const bool in_other = e.inputs.size() == 2 && Has(labels[1 - k], l);
        if (!in_out(l) && !in_other) {
          axes.push_back(static_cast<int64_t>(d));
        } else {
          kept.push_back(l);
        }
      }
      if (!axes.empty()) {
        x[k] = ReduceSum(x[k], axes, k);
        labels[k] = kept;
      }
    }
    if (e.inputs.size() == 1) {
      Emit(TransposeTo(x[0], labels[0], e.output, "out"), einsum_.outputs[0]);
      return std::move(nodes_);
    }
    Labels batch, m, n, contracted;
    for (int l : e.output) {
      const bool a = Has(labels[0], l), b = Has(labels[1], l);
      (a && b ? batch : a ? m : n).push_back(l);
    }
    for (int l : labels[0]) {
      if (!in_out(l)) contracted.push_back(l);
    }
    for (int l : contracted) {
      if (Size(0, labels[0], l) != Size(1, labels[1], l)) {
        return Err("Einsum '" + equation + "': a contracted label is broadcast (sizes " +
                   std::to_string(Size(0, labels[0], l)) + " and " + std::to_string(Size(1, labels[1], l)) +
                   "); not supported");
      }
    }
    if (contracted.empty()) {
      // Elementwise with broadcasting: both operands in the output's order,
      // with 1 for the labels they lack.
      int y[2];
      for (int k = 0; k < 2; ++k) {
        Labels own;
        for (int l : e.output) {
          if (Has(labels[k], l)) own.push_back(l);
        }
        const int t = TransposeTo(x[k], labels[k], own, k == 0 ? "a" : "b");
        Shape shape;
        for (int l : e.output) shape.push_back(Has(labels[k], l) ? Size(k, labels[k], l) : 1);
        y[k] = ReshapeTo(t, shape, k == 0 ? "a" : "b");
      }
      Node mul = NewNode("Mul", "mul");
      mul.inputs = {y[0], y[1]};
      mul.outputs = {einsum_.outputs[0]};
      nodes_.push_back(std::move(mul));
      return std::move(nodes_);
    }
    // [batch..., M, K] x [batch..., K, N].
    int operand[2];
    for (int k = 0; k < 2; ++k) {
      const Labels& rows = k == 0 ? m : n;
      Labels order = batch;
      if (k == 0) {
        order.insert(order.end(), m.begin(), m.end());
        order.insert(order.end(), contracted.begin(), contracted.end());
      } else {
        order.insert(order.end(), contracted.begin(), contracted.end());
        order.insert(order.end(), n.begin(), n.end());
      }
      const int t = TransposeTo(x[k], labels[k], order, k == 0 ? "a" : "b");
      Shape shape;
      for (int l : batch) shape.push_back(Size(k, labels[k], l));
      const int64_t outer = Product(k, labels[k], rows);
      const int64_t inner = Product(k, labels[k], contracted);
      if (k == 0) {
        shape.push_back(outer);
        shape.push_back(inner);
      } else {
        shape.push_back(inner);
        shape.push_back(outer);
      }
      operand[k] = ReshapeTo(t, shape, k == 0 ? "a" : "b");
    }
    const int product = NewTensor("matmul");
    Node matmul = NewNode("MatMul", "matmul");
    matmul.inputs = {operand[0], operand[1]};
    matmul.outputs = {product};
    nodes_.push_back(std::move(matmul));
    Shape product_shape;
    for (int l : batch) product_shape.push_back(sizes_.at(l));
    product_shape.push_back(Product(0, labels[0], m));
    product_shape.push_back(Product(1, labels[1], n));
    known_[product] = product_shape;
    Labels order = batch;
    order.insert(order.end(), m.begin(), m.end());
    order.insert(order.end(), n.begin(), n.end());
    Shape shape;
    for (int l : order) shape.push_back(sizes_.at(l));
    const int unflat = ReshapeTo(product, shape, "out");
    Emit(TransposeTo(unflat, order, e.output, "out"), einsum_.outputs[0]);
    return std::move(nodes_);
  }

 private:
  Error Err(const std::string& message) const {
    return Fail("node '" + einsum_.name + "': " + message);
  }
  static bool Has(const Labels& labels, int l) {
    return std::find(labels.begin(), labels.end(), l) != labels.end();
  }
  // The size of label `l` in operand k (which holds `labels` now).
  int64_t Size(int k, const Labels& labels, int l) const {
    const Shape& s = graph_->tensors[einsum_.inputs[k]].shape;
    const Labels& original = original_labels(k);
    (void)labels;
    const auto it = std::find(original.begin(), original.end(), l);
    return s[static_cast<size_t>(it - original.begin())];
  }
  int64_t Product(int k, const Labels& labels, const Labels& of) const {
    int64_t p = 1;
    for (int l : of) p *= Size(k, labels, l);
    return p;
  }
  const Labels& original_labels(int k) const {
    if (original_.empty()) {
      original_ = ParseEquation(einsum_.GetString("equation", ""), RanksOf(*graph_, einsum_))->inputs;
    }
    return original_[k];
  }

  int NewTensor(const std::string& what) {
    Tensor t;
    const std::string base = graph_->tensors[einsum_.outputs[0]].name + "/einsum_" + what;
    t.name = base;
    for (int i = 1; graph_->FindTensor(t.name) >= 0; ++i) t.name = base + "_" + std::to_string(i);
    t.dtype = DType::Float32;
    return graph_->AddTensor(std::move(t));
  }
  int NewInt64Constant(const std::string& what, const std::vector<int64_t>& values) {
    Tensor t;
    const std::string base = einsum_.name + "/einsum_" + what;
    t.name = base;
    for (int i = 1; graph_->FindTensor(t.name) >= 0; ++i) t.name = base + "_" + std::to_string(i);
    t.dtype = DType::Int64;
    t.shape = {static_cast<int64_t>(values.size())};
    t.shape_known = true;
    t.is_constant = true;
    t.data.resize(values.size() * sizeof(int64_t));
    if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
    return graph_->AddTensor(std::move(t));
  }
  Node NewNode(const std::string& op, const std::string& what) {
    Node node;
    node.op = op;
    node.name = einsum_.name + "/" + what + "_" + std::to_string(nodes_.size());
    node.device = einsum_.device;
    return node;
  }

  int ReduceSum(int x, const std::vector<int64_t>& axes, size_t k) {
    const int y = NewTensor(k == 0 ? "sum_a" : "sum_b");
    Node node = NewNode("ReduceSum", k == 0 ? "sum_a" : "sum_b");
    Attr a;
    a.kind = Attr::Kind::kInts;
    a.ints = axes;
    node.attrs["axes"] = a;
    Attr keep;
    keep.kind = Attr::Kind::kInt;
    keep.i = 0;
    node.attrs["keepdims"] = keep;
    node.inputs = {x};
    node.outputs = {y};
    nodes_.push_back(std::move(node));
    Shape in = CurrentShape(x), out;
    for (size_t d = 0; d < in.size(); ++d) {
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) out.push_back(in[d]);
    }
    known_[y] = out;
    return y;
  }
  // `x` (labels `from`) transposed to the order `to` (a permutation of
  // `from`); `x` itself when that is the identity.
  int TransposeTo(int x, const Labels& from, const Labels& to, const std::string& what) {
    std::vector<int64_t> perm;
    for (int l : to) perm.push_back(std::find(from.begin(), from.end(), l) - from.begin());
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (identity) return x;
    const int y = NewTensor("transpose_" + what);
    Node node = NewNode("Transpose", "transpose_" + what);
    Attr a;
    a.kind = Attr::Kind::kInts;
    a.ints = perm;
    node.attrs["perm"] = a;
    node.inputs = {x};
    node.outputs = {y};
    nodes_.push_back(std::move(node));
    const Shape in = CurrentShape(x);
    Shape out;
    for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
    known_[y] = out;
    return y;
  }
  // `x` reshaped to `shape` (static); `x` itself when it has that shape
  // already, as far as the lowering knows (an input, or a node's output
  // whose shape is tracked in shapes_).
  int ReshapeTo(int x, const Shape& shape, const std::string& what) {
    if (CurrentShape(x) == shape) return x;
    const int y = NewTensor("reshape_" + what);
    Node node = NewNode("Reshape", "reshape_" + what);
    node.inputs = {x, NewInt64Constant("shape_" + what, shape)};
    node.outputs = {y};
    nodes_.push_back(std::move(node));
    known_[y] = shape;
    return y;
  }
  // The shape of `x`: an Einsum input's, or computed from the nodes so far.
  Shape CurrentShape(int x) const {
    const auto it = known_.find(x);
    if (it != known_.end()) return it->second;
    return graph_->tensors[x].shape;
  }
  // Makes the last node write `out`, or copies `x` into `out`.
  void Emit(int x, int out) {
    if (!nodes_.empty() && nodes_.back().outputs[0] == x) {
      nodes_.back().outputs[0] = out;
      return;
    }
    Node node = NewNode("Identity", "identity");
    node.inputs = {x};
    node.outputs = {out};
    nodes_.push_back(std::move(node));
  }

  Graph* graph_;
  const Node& einsum_;
  std::map<int, int64_t> sizes_;
  std::vector<Node> nodes_;
  std::map<int, Shape> known_;  // shapes of the new tensors
  mutable std::vector<Labels> original_;
};

}  // namespace

const OpFamily kEinsumOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

Check LowerEinsum(Graph* graph, bool* lowered) {
  *lowered = false;
  std::vector<Node> nodes;
  nodes.reserve(graph->nodes.size());
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (graph->nodes[i].op != "Einsum") {
      nodes.push_back(std::move(graph->nodes[i]));
      continue;
    }
    const Node einsum = graph->nodes[i];
    for (int t : einsum.inputs) {
      if (t < 0 || !graph->tensors[t].shape_known) {
        return Fail("node '" + einsum.name + "': Einsum needs inputs of known shape");
      }
    }
    BATON_ASSIGN_OR_RETURN(std::vector<Node> lowered_nodes, Lowerer(graph, einsum).Run());
    for (Node& n : lowered_nodes) nodes.push_back(std::move(n));
    *lowered = true;
  }
  graph->nodes = std::move(nodes);
  return Check();
}

}  // namespace baton::planner
