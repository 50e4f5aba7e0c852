#include "my_op_kernel.h"

#include <string.h>

#include "baton/custom_op.h"

namespace example {
namespace {

using baton::CustomAttributes;
using baton::KernelCall;
using baton::Status;

// The attributes the computation uses, read once per call (Load verifies
// the nested buffer; the getters are plain reads after it).
struct MyOpAttributes {
  float alpha = 0;
  int64_t bias = 0;
  CustomAttributes::TensorValue lut;
};

Status ReadAttributes(const KernelCall& call, MyOpAttributes* out) {
  CustomAttributes attrs;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
  if (!attrs.Float("alpha", &out->alpha) || !attrs.Int("bias", &out->bias) ||
      !attrs.Tensor("lut", &out->lut)) {
    return BATON_ERROR(kInvalidArgument, "MyOp needs alpha (float), bias (int), lut (tensor)");
  }
  return Status::Ok();
}

Status MyOpPrepare(const KernelCall& call) {
  if (call.num_inputs != 1 || call.num_outputs != 1) {
    return BATON_ERROR(kInvalidArgument, "MyOp takes one input and one output");
  }
  const baton::TensorArg& x = call.inputs[0];
  if (x.tensor->dtype() != baton::DType::Float32 || x.tensor->shape() == nullptr ||
      x.tensor->shape()->size() < 2 || call.outputs[0].bytes() != x.bytes()) {
    return BATON_ERROR(kInvalidArgument, "MyOp needs a float32 input of rank >= 2 like its output");
  }
  MyOpAttributes a;
  BATON_RETURN_IF_ERROR(ReadAttributes(call, &a));
  const int64_t channels = x.tensor->shape()->Get(1);
  if (a.lut.dtype != baton::DType::Float32 || a.lut.rank != 1 || a.lut.dims[0] != channels) {
    return BATON_ERROR(kInvalidArgument, "MyOp's lut must be float32 with one value per channel");
  }
  // The attributes the computation ignores, read as a kernel would.
  CustomAttributes attrs;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
  const char* mode = attrs.String("mode");
  int64_t taps[4];
  float gains[4];
  const baton::schema::Attribute* tags = attrs.Find("tags");
  if (mode == nullptr || strcmp(mode, "affine") != 0 || attrs.Ints("taps", taps, 4) != 3 ||
      attrs.Floats("gains", gains, 4) != 2 || tags == nullptr ||
      tags->kind() != baton::schema::AttributeKind::Strings || tags->strings() == nullptr ||
      tags->strings()->size() != 2) {
    return BATON_ERROR(kInvalidArgument, "MyOp: unexpected mode, taps, gains or tags");
  }
  return Status::Ok();
}

Status MyOpEval(const KernelCall& call) {
  MyOpAttributes a;
  BATON_RETURN_IF_ERROR(ReadAttributes(call, &a));
  const baton::TensorArg& x = call.inputs[0];
  const int64_t channels = x.tensor->shape()->Get(1);
  int64_t inner = 1;
  for (uint32_t d = 2; d < x.tensor->shape()->size(); ++d) inner *= x.tensor->shape()->Get(d);
  const int64_t total = x.elements();
  const float* in = x.f32();
  float* out = call.outputs[0].f32();
  const float bias = static_cast<float>(a.bias);
  for (int64_t i = 0; i < total; ++i) {
    float lut;
    memcpy(&lut, a.lut.data + sizeof(float) * static_cast<size_t>((i / inner) % channels),
           sizeof(float));
    out[i] = a.alpha * in[i] + bias + lut;
  }
  return Status::Ok();
}

}  // namespace

Status RegisterMyOp(baton::KernelRegistry* registry, baton::DeviceKind kind) {
  baton::Kernel kernel;
  kernel.prepare = MyOpPrepare;
  kernel.eval = MyOpEval;
  return registry->RegisterCustom(kMyOpName, kind, kernel);
}

}  // namespace example
