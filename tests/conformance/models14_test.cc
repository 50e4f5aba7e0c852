// Issue 14's conformance models against torch: segmentation (deeplabv3, fcn),
// transformers (vit_b_16, swin_t, maxvit_t, an nn.TransformerEncoder),
// convnext_tiny and a ConvTranspose + Upsample autoencoder. Each is planned
// for ports/linux/targets/cpu.json and for soc4.json (rules put its
// matrix, normalization, attention and resize ops on the accelerators), run
// on the Linux port and compared with torch's output:
//   max |baton - torch| <= 1e-4 * max |torch|.
// Torchvision models come from tools/export_torchvision.py, the others from
// tests/conformance/export_models14.py. Models over ~50 MB of weights are in
// the Models14Heavy suite (the sanitized pass skips it), and so is deeplabv3
// (44 MB, but over 20 s to plan twice).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/test_util.h"

namespace baton::test {
namespace {

const std::vector<std::string> kSoc4Rules = {
    "Conv=npu0",         "MatMul=gpu0",  "Gemm=dsp0",      "LayerNormalization=gpu0",
    "Softmax=dsp0",      "Resize=gpu0",  "ConvTranspose=gpu0", "Gelu=npu0",
    "Add=gpu0",          "Reshape=dsp0", "Transpose=gpu0", "Mul=gpu0",
    "GlobalAveragePool=dsp0", "ReduceMean=dsp0", "Sigmoid=gpu0", "HardSwish=gpu0"};

// Exports once per build directory: `script` is "torchvision" (MODEL, size)
// or "models14" (MODEL, opset). Returns the directory holding model.onnx
// (or MODEL.onnx), input.npy and output.npy.
std::string Export(const std::string& script, const std::string& model, int arg,
                   std::string* onnx) {
  const std::string dir = std::string(BATON_BINARY_DIR) + "/conformance14/" + model + "_" +
                          std::to_string(arg);
  const bool torchvision = script == "torchvision";
  *onnx = dir + (torchvision ? "/" + model + ".onnx" : "/model.onnx");
  const std::string cmd =
      std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
      (torchvision ? "/tools/export_torchvision.py " + model + " " + dir + " --size "
                   : "/tests/conformance/export_models14.py " + model + " " + dir + " --opset ") +
      std::to_string(arg) + " > " + dir + ".log 2>&1";
  EXPECT_TRUE(GenerateOnce(dir, cmd)) << cmd;
  return dir;
}

void Check(const std::string& script, const std::string& model, int arg,
           const std::vector<std::string>& soc4_rules = kSoc4Rules) {
  std::string onnx;
  const std::string dir = Export(script, model, arg, &onnx);
  const auto input = LoadNpyBytes(dir + "/input.npy");
  const auto expected = AsFloats(LoadNpyBytes(dir + "/output.npy"));
  ASSERT_FALSE(expected.empty());
  double scale = 0;
  for (float v : expected) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  ASSERT_GT(scale, 1e-3) << "the reference output is (nearly) all zeros";
  ExpectMatchesOnCpuAndSoc4(onnx, input, expected, soc4_rules, model + "_" + std::to_string(arg));
}

TEST(Models14, AutoEncoderOpsets11To17) {
  for (int opset : {11, 13, 17}) Check("models14", "autoencoder", opset);
}

TEST(Models14, TransformerEncoderOpsets11To17) {
  for (int opset : {11, 13, 17}) Check("models14", "transformer", opset);
}

TEST(Models14Heavy, DeepLabV3MobileNetV3Large) { Check("torchvision", "deeplabv3_mobilenet_v3_large", 64); }

TEST(Models14Heavy, ConvNextTiny) { Check("torchvision", "convnext_tiny", 64); }

TEST(Models14Heavy, FcnResNet50) { Check("torchvision", "fcn_resnet50", 64); }

TEST(Models14Heavy, VitB16) { Check("models14", "vit_b_16_32", 13); }

TEST(Models14Heavy, SwinT) { Check("torchvision", "swin_t", 64); }

// maxvit_t's 44 Einsum nodes ("B G H I D, B G H J D -> B G H I J" and
// "B G H I J, B G H J D -> B G H I D") lower to MatMul. Every stage's grid
// must be divisible by the partition size 7, so the input by 32 * 7: 224 is
// the smallest input it accepts. At 224 its first
// convolutions need 26 MB, over the NPU's 8 MB SRAM: its MatMuls, Softmax and
// Gemms go to the GPU instead.
TEST(Models14Heavy, MaxVitT) {
  Check("torchvision", "maxvit_t", 224, {"MatMul=gpu0", "Softmax=gpu0", "Gemm=gpu0", "Sigmoid=gpu0"});
}

}  // namespace
}  // namespace baton::test
