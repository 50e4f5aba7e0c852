// baton::DecodeBoxes and baton::NonMaxSuppression (baton/postprocess.h) in
// plans built by hand, against torchvision: postprocess_data.h holds inputs
// and the outputs of torchvision's BoxCoder.decode_single and SSD's
// postprocess_detections (make_postprocess_data.py). Also the tie order on a
// hand-computed case, the workspace size formula, and prepare's errors.

#include "baton/postprocess.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <string>
#include <vector>

#include "baton/executor.h"
#include "plan_builder.h"
#include "postprocess_data.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;
using postprocess_data::Case;
using postprocess_data::kCases;
using schema::AttributeKind;

struct AttrSpec {
  std::string name;
  AttributeKind kind;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

AttrSpec IntAttr(const std::string& name, int64_t v) { return {name, AttributeKind::Int, {v}, {}}; }
AttrSpec FloatAttr(const std::string& name, float v) {
  return {name, AttributeKind::Float, {}, {v}};
}

// The nested CustomAttributes buffer, sorted by name as the schema requires.
std::vector<uint8_t> Attributes(std::vector<AttrSpec> specs) {
  std::sort(specs.begin(), specs.end(),
            [](const AttrSpec& x, const AttrSpec& y) { return x.name < y.name; });
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<schema::Attribute>> attrs;
  for (const AttrSpec& s : specs) {
    attrs.push_back(schema::CreateAttributeDirect(fbb, s.name.c_str(), s.kind,
                                                  s.ints.empty() ? nullptr : &s.ints,
                                                  s.floats.empty() ? nullptr : &s.floats));
  }
  fbb.Finish(schema::CreateCustomAttributesDirect(fbb, &attrs));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

std::vector<AttrSpec> DecodeAttrs(const Case& k) {
  return {{"weights", AttributeKind::Floats, {}, {k.weights, k.weights + 4}},
          FloatAttr("clip", k.clip)};
}

std::vector<AttrSpec> NmsAttrs(const Case& k) {
  std::vector<AttrSpec> a = {FloatAttr("score_thresh", k.score_thresh),
                             FloatAttr("nms_thresh", k.nms_thresh),
                             IntAttr("topk_candidates", k.topk), IntAttr("detections_per_img", k.d),
                             IntAttr("background_class", k.background)};
  if (k.height > 0) a.push_back({"image_size", AttributeKind::Ints, {k.height, k.width}, {}});
  return a;
}

// The workspace NonMaxSuppression needs, by the formula of the header.
uint64_t NmsWorkspace(const Case& k) {
  const int64_t classes = k.background >= 0 ? k.c - 1 : k.c;
  return static_cast<uint64_t>(classes * std::min(k.topk, k.a) * 8 + classes * 4);
}

// Plan tensors at 64-byte aligned offsets of one domain.
class Layout {
 public:
  uint64_t Take(uint64_t bytes) {
    const uint64_t at = next_;
    next_ = (next_ + bytes + 63) / 64 * 64;
    return at;
  }
  uint64_t size() const { return next_ + 64; }

 private:
  uint64_t next_ = 0;
};

enum class Graph { kDecode, kNms, kChain };

struct PlanOptions {
  std::vector<AttrSpec> decode_attrs;
  std::vector<AttrSpec> nms_attrs;
  uint64_t workspace = 0;              // bytes of NonMaxSuppression's workspace (0: none)
  DType classes_dtype = DType::Int64;  // wrong on purpose in error tests
  int64_t anchor_cols = 4;
};

flatbuffers::Offset<void> Params(PlanBuilder* b, const char* name,
                                 const std::vector<AttrSpec>& attrs) {
  const std::vector<uint8_t> bytes = Attributes(attrs);
  b->fbb().ForceVectorAlignment(bytes.size(), 1, 8);
  const auto vec = b->fbb().CreateVector(bytes);
  return schema::CreateCustomParams(b->fbb(), b->fbb().CreateString(name), vec).Union();
}

// kDecode: codes -> DecodeBoxes(anchors constant) -> boxes.
// kNms:    boxes, scores -> NonMaxSuppression -> 4 outputs.
// kChain:  codes, scores -> DecodeBoxes -> NonMaxSuppression -> 4 outputs.
AlignedPlan CasePlan(const Case& k, Graph graph, const PlanOptions& o, uint64_t* arena_bytes) {
  PlanBuilder b;
  Layout l;
  const int64_t n = k.n, a = k.a, c = k.c, d = k.d;
  const uint64_t box_bytes = static_cast<uint64_t>(n * a * 4 * 4);
  // Offsets first: the domain's size must be known before the tensors.
  const uint64_t at_codes = l.Take(box_bytes);
  const uint64_t at_boxes = l.Take(box_bytes);
  const uint64_t at_scores = l.Take(static_cast<uint64_t>(n * a * c * 4));
  const uint64_t at_out_boxes = l.Take(static_cast<uint64_t>(n * d * 16));
  const uint64_t at_out_scores = l.Take(static_cast<uint64_t>(n * d * 4));
  const uint64_t at_out_classes = l.Take(static_cast<uint64_t>(n * d * 8));
  const uint64_t at_out_count = l.Take(static_cast<uint64_t>(n * 4));
  const uint64_t at_workspace = l.Take(std::max<uint64_t>(o.workspace, 1));
  *arena_bytes = l.size();
  const uint32_t dram = b.Domain("dram", l.size());
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  std::vector<uint32_t> inputs, outputs;
  uint32_t boxes = 0;
  if (graph != Graph::kNms) {
    const uint32_t codes = b.Arena("rel_codes", {n, a, 4}, dram, at_codes);
    const uint32_t anchors =
        o.anchor_cols == 4
            ? b.Constant("anchors", {a, 4}, std::vector<float>(k.anchors, k.anchors + a * 4))
            : b.Constant("anchors", {a, o.anchor_cols},
                         std::vector<float>(static_cast<size_t>(a * o.anchor_cols), 1.0f));
    boxes = b.Arena("boxes", {n, a, 4}, dram, at_boxes);
    b.Node("decode", Op::Custom, cpu, {static_cast<int32_t>(codes), static_cast<int32_t>(anchors)},
           {boxes}, {}, 0, schema::Params::CustomParams,
           Params(&b, kDecodeBoxesOp, o.decode_attrs));
    inputs.push_back(codes);
    if (graph == Graph::kDecode) outputs.push_back(boxes);
  } else {
    boxes = b.Arena("boxes", {n, a, 4}, dram, at_boxes);
    inputs.push_back(boxes);
  }
  if (graph != Graph::kDecode) {
    const uint32_t scores = b.Arena("scores", {n, a, c}, dram, at_scores);
    const uint32_t out_boxes = b.Arena("det_boxes", {n, d, 4}, dram, at_out_boxes);
    const uint32_t out_scores = b.Arena("det_scores", {n, d}, dram, at_out_scores);
    const uint32_t out_classes =
        b.Arena("det_classes", {n, d}, dram, at_out_classes, 1, 0, o.classes_dtype);
    const uint32_t out_count = b.Arena("det_count", {n}, dram, at_out_count, 1, 0, DType::Int32);
    std::vector<uint32_t> workspace;
    if (o.workspace > 0) {
      workspace.push_back(b.Arena("nms.workspace", {static_cast<int64_t>(o.workspace)}, dram,
                                  at_workspace, 1, 0, DType::UInt8));
    }
    b.Node("nms", Op::Custom, cpu, {static_cast<int32_t>(boxes), static_cast<int32_t>(scores)},
           {out_boxes, out_scores, out_classes, out_count}, {}, 0, schema::Params::CustomParams,
           Params(&b, kNonMaxSuppressionOp, o.nms_attrs), workspace);
    inputs.push_back(scores);
    outputs.insert(outputs.end(), {out_boxes, out_scores, out_classes, out_count});
  }
  b.Inputs(inputs);
  b.Outputs(outputs);
  return b.Finish();
}

struct Outputs {
  std::vector<float> boxes, scores;
  std::vector<int64_t> classes;
  std::vector<int32_t> count;
};

// Loads and runs the plan with the post-processing kernels; `error` gets the
// loader's text.
Status RunCase(const Case& k, Graph graph, const PlanOptions& o, Outputs* out,
               std::string* error = nullptr) {
  uint64_t arena_bytes = 0;
  const AlignedPlan plan = CasePlan(k, graph, o, &arena_bytes);
  KernelRegistry registry;
  BATON_RETURN_IF_ERROR(RegisterPostprocessKernels(&registry));
  PlanView view;
  LoadError load_error;
  Status status = PlanView::Load(plan.data(), plan.size(), &view, &load_error);
  static Executor executor;
  InlinePort port;
  AlignedPlan arena(std::vector<uint8_t>(arena_bytes, 0xCD).data(), arena_bytes);
  const Buffer arenas[] = {{arena.mutable_data(), arena_bytes}};
  if (status.ok()) status = executor.Init(view, registry, &port, arenas, &load_error);
  if (error != nullptr) *error = load_error.text;
  BATON_RETURN_IF_ERROR(status);
  const size_t box_bytes = static_cast<size_t>(k.n * k.a * 16);
  std::vector<ConstBuffer> in;
  if (graph == Graph::kNms) {
    in.push_back({k.decoded, box_bytes});
  } else {
    in.push_back({k.codes, box_bytes});
  }
  if (graph != Graph::kDecode) in.push_back({k.scores, static_cast<size_t>(k.n * k.a * k.c * 4)});
  std::vector<Buffer> outs;
  if (graph == Graph::kDecode) {
    out->boxes.assign(static_cast<size_t>(k.n * k.a * 4), -1.0f);
    outs.push_back({out->boxes.data(), box_bytes});
  } else {
    // Filled with garbage: the kernel must write every row.
    out->boxes.assign(static_cast<size_t>(k.n * k.d * 4), -7.0f);
    out->scores.assign(static_cast<size_t>(k.n * k.d), -7.0f);
    out->classes.assign(static_cast<size_t>(k.n * k.d), -7);
    out->count.assign(static_cast<size_t>(k.n), -7);
    outs.push_back({out->boxes.data(), out->boxes.size() * 4});
    outs.push_back({out->scores.data(), out->scores.size() * 4});
    outs.push_back({out->classes.data(), out->classes.size() * 8});
    outs.push_back({out->count.data(), out->count.size() * 4});
  }
  return executor.Invoke(Span<const ConstBuffer>(in.data(), in.size()),
                         Span<const Buffer>(outs.data(), outs.size()));
}

// |got - want| <= 1e-5 relative to max(1, |want|): float rounding of exp may
// differ by an ulp from torch's vectorized exp.
void ExpectClose(const float* got, const float* want, size_t count, const std::string& what) {
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    const float tol = 1e-5f * std::max(1.0f, fabsf(want[i]));
    if (!(fabsf(got[i] - want[i]) <= tol) && bad++ < 5) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", torchvision " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

void ExpectDetections(const Case& k, const Outputs& out) {
  const size_t rows = static_cast<size_t>(k.n * k.d);
  EXPECT_EQ(out.count, std::vector<int32_t>(k.out_count, k.out_count + k.n)) << k.name;
  EXPECT_EQ(out.classes, std::vector<int64_t>(k.out_classes, k.out_classes + rows)) << k.name;
  ExpectClose(out.scores.data(), k.out_scores, rows, std::string(k.name) + " scores");
  ExpectClose(out.boxes.data(), k.out_boxes, rows * 4, std::string(k.name) + " boxes");
}

PlanOptions CaseOptions(const Case& k) {
  PlanOptions o;
  o.decode_attrs = DecodeAttrs(k);
  o.nms_attrs = NmsAttrs(k);
  o.workspace = NmsWorkspace(k);
  return o;
}

TEST(PostprocessTest, DecodeBoxesMatchesTorchvision) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.name);
    Outputs out;
    std::string error;
    ASSERT_TRUE(RunCase(k, Graph::kDecode, CaseOptions(k), &out, &error).ok()) << error;
    ExpectClose(out.boxes.data(), k.decoded, out.boxes.size(), std::string(k.name) + " decoded");
  }
}

TEST(PostprocessTest, DecodeBoxesDefaultsAreSsds) {
  // kCases[0] uses SSD's weights and clip: the same result without attributes.
  const Case& k = kCases[0];
  ASSERT_EQ(k.weights[0], 10.0f);
  ASSERT_EQ(k.clip, 4.135166556742356f);
  PlanOptions o = CaseOptions(k);
  o.decode_attrs.clear();
  Outputs out;
  std::string error;
  ASSERT_TRUE(RunCase(k, Graph::kDecode, o, &out, &error).ok()) << error;
  ExpectClose(out.boxes.data(), k.decoded, out.boxes.size(), "decoded");
}

TEST(PostprocessTest, NonMaxSuppressionMatchesTorchvision) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.name);
    Outputs out;
    std::string error;
    ASSERT_TRUE(RunCase(k, Graph::kNms, CaseOptions(k), &out, &error).ok()) << error;
    ExpectDetections(k, out);
  }
}

TEST(PostprocessTest, DecodeThenSuppressMatchesTorchvision) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.name);
    Outputs out;
    std::string error;
    ASSERT_TRUE(RunCase(k, Graph::kChain, CaseOptions(k), &out, &error).ok()) << error;
    ExpectDetections(k, out);
  }
}

// All scores equal, disjoint boxes: the order is class, then anchor; top-k
// keeps the lowest anchors; D cuts the rest (hand-computed).
TEST(PostprocessTest, TiesGoToLowerClassThenLowerAnchor) {
  const float anchors[16] = {0, 0, 10, 10, 20, 0, 30, 10, 40, 0, 50, 10, 60, 0, 70, 10};
  const float codes[16] = {};
  float scores[12];
  std::fill(scores, scores + 12, 0.5f);
  Case k{};
  k.name = "hand";
  k.n = 1, k.a = 4, k.c = 3;
  std::copy(kCases[0].weights, kCases[0].weights + 4, k.weights);
  k.clip = kCases[0].clip;
  k.score_thresh = 0.25f, k.nms_thresh = 0.5f;
  k.topk = 3, k.d = 5, k.background = 0;
  k.codes = codes, k.anchors = anchors, k.decoded = anchors, k.scores = scores;
  Outputs out;
  std::string error;
  ASSERT_TRUE(RunCase(k, Graph::kNms, CaseOptions(k), &out, &error).ok()) << error;
  EXPECT_EQ(out.count, std::vector<int32_t>{5});
  EXPECT_EQ(out.classes, (std::vector<int64_t>{1, 1, 1, 2, 2}));
  const std::vector<float> x1 = {out.boxes[0], out.boxes[4], out.boxes[8], out.boxes[12],
                                 out.boxes[16]};
  EXPECT_EQ(x1, (std::vector<float>{0, 20, 40, 0, 20}));  // anchors 0 1 2, 0 1
  // Overlapping boxes of one class: only the first of the tie survives;
  // the same box in another class is kept (NMS is per class).
  const float same[16] = {0, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10};
  k.decoded = same;
  ASSERT_TRUE(RunCase(k, Graph::kNms, CaseOptions(k), &out, &error).ok()) << error;
  EXPECT_EQ(out.count, std::vector<int32_t>{2});
  EXPECT_EQ(out.classes, (std::vector<int64_t>{1, 2, 0, 0, 0}));
  EXPECT_EQ(out.scores, (std::vector<float>{0.5f, 0.5f, 0, 0, 0}));
  EXPECT_EQ(std::count(out.boxes.begin() + 8, out.boxes.end(), 0.0f), 12);  // unused rows
}

TEST(PostprocessTest, WorkspaceBytesFollowTheFormula) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.name);
    for (Graph graph : {Graph::kNms, Graph::kDecode}) {
      uint64_t arena_bytes = 0;
      const AlignedPlan plan = CasePlan(k, graph, CaseOptions(k), &arena_bytes);
      PlanView view;
      ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
      const schema::Node& node = *view.node(0);
      TensorArg args[2];
      for (uint32_t i = 0; i < 2; ++i) {
        args[i].tensor = view.tensor(static_cast<uint32_t>(node.inputs()->Get(i)));
      }
      KernelCall call;
      call.node = &node;
      call.inputs = args;
      call.num_inputs = 2;
      EXPECT_EQ(PostprocessWorkspaceBytes(call), graph == Graph::kNms ? NmsWorkspace(k) : 0u);
    }
  }
  // ties: 4 classes but the background, K = 10: 4 * 10 * 8 + 4 * 4.
  EXPECT_EQ(NmsWorkspace(kCases[0]), 336u);
}

// prepare's checks: Init fails naming the node and the op.
TEST(PostprocessTest, PrepareRejectsBadNodes) {
  const Case& k = kCases[0];
  struct Bad {
    const char* what;
    Graph graph;
    PlanOptions options;
    const char* message;  // part of the loader's text
  };
  std::vector<Bad> bad;
  auto with = [&](const char* what, Graph g, const char* message, auto edit) {
    Bad b{what, g, CaseOptions(k), message};
    edit(&b.options);
    bad.push_back(std::move(b));
  };
  auto drop = [](std::vector<AttrSpec>* attrs, const char* name) {
    attrs->erase(std::remove_if(attrs->begin(), attrs->end(),
                                [&](const AttrSpec& s) { return s.name == name; }),
                 attrs->end());
  };
  with("missing D", Graph::kNms, "needs Int attributes",
       [&](PlanOptions* o) { drop(&o->nms_attrs, "detections_per_img"); });
  with("misspelt", Graph::kNms, "unknown attribute",
       [&](PlanOptions* o) { o->nms_attrs.push_back(FloatAttr("score_threshold", 0.5f)); });
  with("topk as float", Graph::kNms, "needs Int attributes", [&](PlanOptions* o) {
    drop(&o->nms_attrs, "topk_candidates");
    o->nms_attrs.push_back(FloatAttr("topk_candidates", 10.0f));
  });
  with("background out of range", Graph::kNms, "background_class", [&](PlanOptions* o) {
    drop(&o->nms_attrs, "background_class");
    o->nms_attrs.push_back(IntAttr("background_class", k.c));
  });
  with("image_size of one value", Graph::kNms, "image_size", [&](PlanOptions* o) {
    drop(&o->nms_attrs, "image_size");
    o->nms_attrs.push_back({"image_size", AttributeKind::Ints, {96}, {}});
  });
  with("int32 classes", Graph::kNms, "classes int64",
       [&](PlanOptions* o) { o->classes_dtype = DType::Int32; });
  with("small workspace", Graph::kNms, "workspace", [&](PlanOptions* o) { o->workspace -= 1; });
  with("no workspace", Graph::kNms, "workspace", [&](PlanOptions* o) { o->workspace = 0; });
  with("anchors [A, 3]", Graph::kDecode, "anchors", [&](PlanOptions* o) { o->anchor_cols = 3; });
  with("three weights", Graph::kDecode, "weights",
       [&](PlanOptions* o) { o->decode_attrs[0].floats.pop_back(); });
  with("zero weight", Graph::kDecode, "weights",
       [&](PlanOptions* o) { o->decode_attrs[0].floats[1] = 0.0f; });
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.what);
    Outputs out;
    std::string error;
    EXPECT_EQ(RunCase(k, b.graph, b.options, &out, &error).code(), StatusCode::kInvalidArgument);
    EXPECT_NE(error.find(b.graph == Graph::kDecode ? "decode" : "nms"), std::string::npos) << error;
    EXPECT_NE(error.find(b.message), std::string::npos) << error;
  }
}

TEST(PostprocessTest, ShapeRules) {
  PostprocessTensorSpec in[2];
  in[0].rank = 3, in[0].dims[0] = 2, in[0].dims[1] = 7, in[0].dims[2] = 4;
  in[1].rank = 3, in[1].dims[0] = 2, in[1].dims[1] = 7, in[1].dims[2] = 91;
  NonMaxSuppressionAttrs attrs;
  attrs.score_thresh = 0.01f, attrs.nms_thresh = 0.45f;
  attrs.topk_candidates = 400, attrs.detections_per_img = 200;
  PostprocessTensorSpec out[4];
  size_t ws = 0;
  ASSERT_EQ(InferNonMaxSuppression(attrs, in, 2, out, &ws), nullptr);
  EXPECT_EQ(out[0].rank, 3u);
  EXPECT_EQ(out[0].dims[1], 200);
  EXPECT_EQ(out[2].dtype, DType::Int64);
  EXPECT_EQ(out[3].dtype, DType::Int32);
  EXPECT_EQ(out[3].dims[0], 2);
  EXPECT_EQ(ws, 90u * 7 * 8 + 90 * 4);  // K = A = 7 < 400
  in[1].dims[1] = 8;
  EXPECT_NE(InferNonMaxSuppression(attrs, in, 2, out, &ws), nullptr);  // A differs
  in[1].dims[1] = 7;
  in[1].dtype = DType::Int8;
  EXPECT_NE(InferNonMaxSuppression(attrs, in, 2, out, &ws), nullptr);
  // DecodeBoxes with anchors [1, A, 4] and [N, A, 4]; [3, A, 4] is neither.
  DecodeBoxesAttrs decode;
  in[1] = in[0];
  in[1].dims[0] = 1;
  EXPECT_EQ(InferDecodeBoxes(decode, in, 2, out), nullptr);
  in[1].dims[0] = 2;
  EXPECT_EQ(InferDecodeBoxes(decode, in, 2, out), nullptr);
  in[1].dims[0] = 3;
  EXPECT_NE(InferDecodeBoxes(decode, in, 2, out), nullptr);
}

}  // namespace
}  // namespace baton::testing
