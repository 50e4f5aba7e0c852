#pragma once
// What the post-processing kernels share: reading their attributes from the
// node's CustomParams, and the tensor specs of a KernelCall. Internal to
// baton_postprocess.

#include "baton/custom_op.h"
#include "baton/postprocess.h"

namespace baton::postprocess {

// The attributes of a DecodeBoxes / NonMaxSuppression node; null or a static
// message naming the op and the attribute at fault (wrong kind, missing,
// unknown name).
const char* ReadDecodeBoxesAttrs(const CustomAttributes& attrs, DecodeBoxesAttrs* out);
const char* ReadNonMaxSuppressionAttrs(const CustomAttributes& attrs, NonMaxSuppressionAttrs* out);

// The spec of a present tensor.
PostprocessTensorSpec SpecOf(const TensorArg& arg);
// True when `arg` is present with the dtype and shape of `spec`.
bool Matches(const TensorArg& arg, const PostprocessTensorSpec& spec);

Status DecodeBoxesPrepare(const KernelCall& call);
Status DecodeBoxesEval(const KernelCall& call);
Status NonMaxSuppressionPrepare(const KernelCall& call);
Status NonMaxSuppressionEval(const KernelCall& call);

}  // namespace baton::postprocess
