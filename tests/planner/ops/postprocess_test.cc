// The planner's output specs for the post-processing custom ops
// (baton/planner/ops/postprocess.h), hand-computed from the op contracts of
// docs/operators.md, on torchvision's SSDlite320 sizes (3234 anchors, 91
// classes, 300 detections).

#include "baton/planner/ops/postprocess.h"

#include <gtest/gtest.h>

namespace baton::planner {
namespace {

Attr IntAttr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = v;
  return a;
}

Attr FloatAttr(float v) {
  Attr a;
  a.kind = Attr::Kind::kFloat;
  a.f = v;
  return a;
}

std::map<std::string, Attr> SsdliteNms() {
  Attr size;
  size.kind = Attr::Kind::kInts;
  size.ints = {320, 320};
  return {{"score_thresh", FloatAttr(0.001f)},
          {"nms_thresh", FloatAttr(0.55f)},
          {"topk_candidates", IntAttr(300)},
          {"detections_per_img", IntAttr(300)},
          {"image_size", size}};
}

const std::vector<TensorSpec> kNmsInputs = {{DType::Float32, {2, 3234, 4}},
                                            {DType::Float32, {2, 3234, 91}}};

TEST(PostprocessOpsTest, NonMaxSuppressionOutputs) {
  auto out = InferPostprocessOutputs("nms", "baton::NonMaxSuppression", kNmsInputs, SsdliteNms());
  ASSERT_TRUE(out.ok()) << out.error();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].dtype, DType::Float32);
  EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 300, 4}));
  EXPECT_EQ((*out)[1].dtype, DType::Float32);
  EXPECT_EQ((*out)[1].shape, (std::vector<int64_t>{2, 300}));
  EXPECT_EQ((*out)[2].dtype, DType::Int64);
  EXPECT_EQ((*out)[2].shape, (std::vector<int64_t>{2, 300}));
  EXPECT_EQ((*out)[3].dtype, DType::Int32);
  EXPECT_EQ((*out)[3].shape, (std::vector<int64_t>{2}));
}

TEST(PostprocessOpsTest, DecodeBoxesOutputs) {
  for (const std::vector<int64_t>& anchors :
       {std::vector<int64_t>{3234, 4}, std::vector<int64_t>{1, 3234, 4},
        std::vector<int64_t>{2, 3234, 4}}) {
    auto out =
        InferPostprocessOutputs("decode", "baton::DecodeBoxes",
                                {{DType::Float32, {2, 3234, 4}}, {DType::Float32, anchors}}, {});
    ASSERT_TRUE(out.ok()) << out.error();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 3234, 4}));
  }
  Attr weights;
  weights.kind = Attr::Kind::kFloats;
  weights.floats = {10.0f, 10.0f, 5.0f, 5.0f};
  auto out = InferPostprocessOutputs("decode", "baton::DecodeBoxes",
                                     {{DType::Float32, {1, 8, 4}}, {DType::Float32, {8, 4}}},
                                     {{"weights", weights}, {"clip", FloatAttr(4.0f)}});
  EXPECT_TRUE(out.ok()) << out.error();
}

void ExpectError(const std::string& op, const std::vector<TensorSpec>& inputs,
                 const std::map<std::string, Attr>& attrs, const std::string& part) {
  auto out = InferPostprocessOutputs("post/nms_1", op, inputs, attrs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().rfind("node 'post/nms_1': ", 0), 0u) << out.error();
  EXPECT_NE(out.error().find(part), std::string::npos) << out.error();
}

TEST(PostprocessOpsTest, ErrorsNameNodeOpAndCause) {
  const std::string nms = "baton::NonMaxSuppression";
  auto attrs = SsdliteNms();
  attrs.erase("detections_per_img");
  ExpectError(nms, kNmsInputs, attrs, "needs attribute 'detections_per_img'");
  attrs = SsdliteNms();
  attrs["score_threshold"] = FloatAttr(0.5f);
  ExpectError(nms, kNmsInputs, attrs, "unknown attribute 'score_threshold'");
  attrs = SsdliteNms();
  attrs["topk_candidates"] = FloatAttr(300.0f);
  ExpectError(nms, kNmsInputs, attrs, "'topk_candidates' must be Int, not Float");
  // The kinds only custom ops carry (a torch symbolic's tensor attribute).
  attrs = SsdliteNms();
  Attr tensor_size;
  tensor_size.kind = Attr::Kind::kTensor;
  attrs["image_size"] = tensor_size;
  ExpectError(nms, kNmsInputs, attrs, "'image_size' must be Ints, not Tensor");
  attrs = SsdliteNms();
  Attr strings_size;
  strings_size.kind = Attr::Kind::kStrings;
  strings_size.strings = {"320", "320"};
  attrs["image_size"] = strings_size;
  ExpectError(nms, kNmsInputs, attrs, "'image_size' must be Ints, not Strings");
  attrs = SsdliteNms();
  attrs["background_class"] = IntAttr(91);
  ExpectError(nms, kNmsInputs, attrs, "background_class");
  attrs = SsdliteNms();
  attrs["detections_per_img"] = IntAttr(0);
  ExpectError(nms, kNmsInputs, attrs, "detections_per_img");
  ExpectError(nms, {kNmsInputs[0], {DType::Float32, {2, 3000, 91}}}, SsdliteNms(),
              "baton::NonMaxSuppression: scores must be [N, A, C]");
  ExpectError(nms, {kNmsInputs[0]}, SsdliteNms(), "takes boxes and scores");
  const std::string decode = "baton::DecodeBoxes";
  Attr int_weights;
  int_weights.kind = Attr::Kind::kInts;
  int_weights.ints = {10, 10, 5, 5};
  ExpectError(decode, {{DType::Float32, {1, 8, 4}}, {DType::Float32, {8, 4}}},
              {{"weights", int_weights}}, "baton::DecodeBoxes: attribute 'weights' must be Floats");
  ExpectError(decode, {{DType::Float32, {1, 8, 4}}, {DType::Float32, {3, 8, 4}}}, {}, "anchors");
  ExpectError(decode, {{DType::Int8, {1, 8, 4}}, {DType::Float32, {8, 4}}}, {}, "float32");
  ExpectError("baton::Nms", kNmsInputs, {}, "not a post-processing op");
}

}  // namespace
}  // namespace baton::planner
