// baton::NonMaxSuppression: torchvision SSD's postprocess_detections after
// the box decoding, with a static maximum of D detections per image.
//
// Per image, in the node's workspace (C' = classes but the background,
// K = min(topk_candidates, A)):
//
//   +------------------+------------------+-----+-------------------+-------------+
//   | class 0: K slots | class 1: K slots | ... | class C'-1: K     | counts[C']  |
//   +------------------+------------------+-----+-------------------+-------------+
//     Candidate {score, key = class * A + anchor}, 8 bytes    uint32 each
//
// 1. One pass over the anchors: every score > score_thresh enters its class's
//    bounded heap (worst kept candidate at the root): its top K, O(A C log K).
// 2. The classes' candidates are packed to the front and heap-sorted, best
//    first, O(M log M) for M <= C' K candidates, in place.
// 3. Greedy NMS in that order against the detections kept so far (written
//    straight into the outputs), until D are kept.
//
// "Best first" is a total order: higher score, then lower class, then lower
// anchor. That is torchvision's order where it has one (batched_nms sorts
// stably over candidates concatenated by class); it also settles the ties
// torch.topk leaves unspecified (docs/operators.md).

#include <string.h>

#include "postprocess_internal.h"

namespace baton::postprocess {
namespace {

struct Candidate {
  float score;
  uint32_t key;  // class * A + anchor
};
static_assert(sizeof(Candidate) == 8, "the workspace size assumes 8-byte candidates");

// x comes before y in the output order.
inline bool Before(const Candidate& x, const Candidate& y) {
  return x.score > y.score || (x.score == y.score && x.key < y.key);
}

inline void Swap(Candidate* x, Candidate* y) {
  const Candidate t = *x;
  *x = *y;
  *y = t;
}

// A max-heap under Before: the root is the candidate that comes last.
void SiftUp(Candidate* heap, uint32_t i) {
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!Before(heap[parent], heap[i])) return;
    Swap(&heap[parent], &heap[i]);
    i = parent;
  }
}

void SiftDown(Candidate* heap, uint32_t i, uint32_t n) {
  for (;;) {
    const uint32_t left = 2 * i + 1;
    if (left >= n) return;
    uint32_t last = left;
    if (left + 1 < n && Before(heap[left], heap[left + 1])) last = left + 1;
    if (!Before(heap[i], heap[last])) return;
    Swap(&heap[i], &heap[last]);
    i = last;
  }
}

// Sorts best first, in place (heapsort: no scratch, O(n log n)).
void SortBestFirst(Candidate* v, uint32_t n) {
  for (uint32_t i = n / 2; i-- > 0;) SiftDown(v, i, n);
  for (uint32_t end = n; end-- > 1;) {
    Swap(&v[0], &v[end]);
    SiftDown(v, 0, end);
  }
}

// std::max's and std::min's argument order, as torchvision's nms kernel.
inline float Max(float a, float b) { return a < b ? b : a; }
inline float Min(float a, float b) { return b < a ? b : a; }

// torch.clamp(v, 0, hi): NaN stays NaN.
inline float Clamp(float v, float hi) { return v < 0.0f ? 0.0f : (v > hi ? hi : v); }

inline float Area(const float* b) { return (b[2] - b[0]) * (b[3] - b[1]); }

// torchvision's nms (CPU kernel) overlap test of candidate b against the
// kept box k, operation for operation.
inline bool Suppresses(const float* k, float k_area, const float* b, float b_area, float thresh) {
  const float xx1 = Max(k[0], b[0]);
  const float yy1 = Max(k[1], b[1]);
  const float xx2 = Min(k[2], b[2]);
  const float yy2 = Min(k[3], b[3]);
  const float w = Max(0.0f, xx2 - xx1);
  const float h = Max(0.0f, yy2 - yy1);
  const float inter = w * h;
  const float ovr = inter / (k_area + b_area - inter);
  return ovr > thresh;
}

Status Load(const KernelCall& call, NonMaxSuppressionAttrs* attrs, PostprocessTensorSpec* out,
            size_t* workspace_bytes) {
  CustomAttributes custom;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &custom));
  const char* problem = ReadNonMaxSuppressionAttrs(custom, attrs);
  if (problem != nullptr) return Status(StatusCode::kInvalidArgument, problem);
  if (call.num_inputs != 2 || call.num_outputs != 4 || !call.inputs[0].present() ||
      !call.inputs[1].present()) {
    return BATON_ERROR(kInvalidArgument,
                       "baton::NonMaxSuppression takes boxes and scores, gives "
                       "boxes, scores, classes and count");
  }
  const PostprocessTensorSpec in[2] = {SpecOf(call.inputs[0]), SpecOf(call.inputs[1])};
  problem = InferNonMaxSuppression(*attrs, in, 2, out, workspace_bytes);
  return problem ? Status(StatusCode::kInvalidArgument, problem) : Status::Ok();
}

}  // namespace

Status NonMaxSuppressionPrepare(const KernelCall& call) {
  NonMaxSuppressionAttrs attrs;
  PostprocessTensorSpec out[4];
  size_t need = 0;
  BATON_RETURN_IF_ERROR(Load(call, &attrs, out, &need));
  if (!Matches(call.outputs[0], out[0]) || !Matches(call.outputs[1], out[1]) ||
      !Matches(call.outputs[2], out[2]) || !Matches(call.outputs[3], out[3])) {
    return BATON_ERROR(kInvalidArgument,
                       "baton::NonMaxSuppression: outputs must be boxes float32 "
                       "[N, D, 4], scores float32 [N, D], classes int64 [N, D], "
                       "count int32 [N] (D = detections_per_img)");
  }
  if (need > 0 && (call.num_workspace < 1 || call.workspace[0].bytes() < need)) {
    return BATON_ERROR(kInvalidArgument,
                       "baton::NonMaxSuppression: workspace smaller than "
                       "PostprocessWorkspaceBytes");
  }
  return Status::Ok();
}

Status NonMaxSuppressionEval(const KernelCall& call) {
  NonMaxSuppressionAttrs attrs;
  PostprocessTensorSpec specs[4];
  size_t need = 0;
  BATON_RETURN_IF_ERROR(Load(call, &attrs, specs, &need));
  const uint32_t n = static_cast<uint32_t>(call.inputs[1].dim(0));
  const uint32_t a = static_cast<uint32_t>(call.inputs[1].dim(1));
  const uint32_t c = static_cast<uint32_t>(call.inputs[1].dim(2));
  const uint32_t d = static_cast<uint32_t>(attrs.detections_per_img);
  const int64_t background = attrs.background_class;
  const uint32_t classes = background >= 0 ? c - 1 : c;
  const uint32_t k = attrs.topk_candidates < a ? static_cast<uint32_t>(attrs.topk_candidates) : a;
  const bool clip = attrs.image_height > 0;
  const float height = static_cast<float>(attrs.image_height);
  const float width = static_cast<float>(attrs.image_width);

  Candidate* candidates = nullptr;
  uint32_t* counts = nullptr;
  if (need > 0) {
    void* ws = call.workspace[0].data;
    if ((reinterpret_cast<uintptr_t>(ws) & 3u) != 0) {
      return BATON_ERROR(kInvalidArgument,
                         "baton::NonMaxSuppression: workspace not 4-byte aligned");
    }
    candidates = static_cast<Candidate*>(ws);
    counts = reinterpret_cast<uint32_t*>(candidates + static_cast<size_t>(classes) * k);
  }

  for (uint32_t i = 0; i < n; ++i) {
    const float* boxes = call.inputs[0].f32() + static_cast<size_t>(i) * a * 4;
    const float* scores = call.inputs[1].f32() + static_cast<size_t>(i) * a * c;
    float* out_boxes = call.outputs[0].f32() + static_cast<size_t>(i) * d * 4;
    float* out_scores = call.outputs[1].f32() + static_cast<size_t>(i) * d;
    int64_t* out_classes = static_cast<int64_t*>(call.outputs[2].data) + static_cast<size_t>(i) * d;

    // 1. Each class's top K above the threshold.
    uint32_t m = 0;
    if (need > 0) {
      for (uint32_t r = 0; r < classes; ++r) counts[r] = 0;
      for (uint32_t anchor = 0; anchor < a; ++anchor) {
        const float* row = scores + static_cast<size_t>(anchor) * c;
        for (uint32_t cls = 0; cls < c; ++cls) {
          if (!(row[cls] > attrs.score_thresh) || static_cast<int64_t>(cls) == background) continue;
          const uint32_t r = background >= 0 && cls > background ? cls - 1 : cls;
          const Candidate x{row[cls], cls * a + anchor};
          Candidate* heap = candidates + static_cast<size_t>(r) * k;
          if (counts[r] < k) {
            heap[counts[r]] = x;
            SiftUp(heap, counts[r]++);
          } else if (Before(x, heap[0])) {
            heap[0] = x;
            SiftDown(heap, 0, k);
          }
        }
      }
      // 2. Pack (forward copies: the destination never passes the source).
      for (uint32_t r = 0; r < classes; ++r) {
        const Candidate* from = candidates + static_cast<size_t>(r) * k;
        for (uint32_t j = 0; j < counts[r]; ++j) candidates[m + j] = from[j];
        m += counts[r];
      }
      SortBestFirst(candidates, m);
    }

    // 3. Greedy NMS within each class, best first.
    uint32_t kept = 0;
    for (uint32_t j = 0; j < m && kept < d; ++j) {
      const uint32_t cls = candidates[j].key / a;
      const float* src = boxes + static_cast<size_t>(candidates[j].key % a) * 4;
      float box[4] = {src[0], src[1], src[2], src[3]};
      if (clip) {
        box[0] = Clamp(box[0], width);
        box[1] = Clamp(box[1], height);
        box[2] = Clamp(box[2], width);
        box[3] = Clamp(box[3], height);
      }
      const float area = Area(box);
      bool suppressed = false;
      for (uint32_t t = 0; t < kept && !suppressed; ++t) {
        if (out_classes[t] != static_cast<int64_t>(cls)) continue;
        const float* other = out_boxes + static_cast<size_t>(t) * 4;
        suppressed = Suppresses(other, Area(other), box, area, attrs.nms_thresh);
      }
      if (suppressed) continue;
      memcpy(out_boxes + static_cast<size_t>(kept) * 4, box, sizeof(box));
      out_scores[kept] = candidates[j].score;
      out_classes[kept] = cls;
      ++kept;
    }
    memset(out_boxes + static_cast<size_t>(kept) * 4, 0, sizeof(float) * 4 * (d - kept));
    memset(out_scores + kept, 0, sizeof(float) * (d - kept));
    memset(out_classes + kept, 0, sizeof(int64_t) * (d - kept));
    static_cast<int32_t*>(call.outputs[3].data)[i] = static_cast<int32_t>(kept);
  }
  return Status::Ok();
}

}  // namespace baton::postprocess
