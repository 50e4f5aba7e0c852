#include "baton/plan_view.h"

#include "baton/kernels.h"
#include "error_text.h"

namespace baton {
namespace {

using internal::TextBuilder;

// Collects the first error: a status plus a description built from parts.
class Checker {
 public:
  explicit Checker(LoadError* out) : out_(out) {}

  template <typename... Parts>
  Status Fail(StatusCode code, const char* message, Parts... parts) {
    if (out_ != nullptr) {
      TextBuilder text(out_->text, sizeof(out_->text));
      (text.Add(parts), ...);
      text.Add(message);
    }
    return Status(code, message);
  }

 private:
  LoadError* out_;
};

bool AddOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  *out = a + b;
  return *out < a;
}

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return true;
  *out = a * b;
  return false;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

bool QueueReaches(const schema::Queue* queue, uint32_t domain) {
  if (queue->domains() == nullptr) return false;
  for (uint32_t d : *queue->domains()) {
    if (d == domain) return true;
  }
  return false;
}

Status CheckTensor(Checker& c, const PlanView& view, uint32_t t) {
  const schema::Tensor* tensor = view.tensor(t);
  const size_t elem = DTypeSize(tensor->dtype());
  if (elem == 0) return c.Fail(StatusCode::kDataLoss, ": unknown dtype", "tensor ", t);
  uint64_t count = 1;
  if (tensor->shape() != nullptr) {
    if (tensor->shape()->size() > kMaxRank) {
      return c.Fail(StatusCode::kResourceExhausted, ": rank exceeds BATON_MAX_RANK", "tensor ", t);
    }
    for (int64_t d : *tensor->shape()) {
      if (d < 0) return c.Fail(StatusCode::kDataLoss, ": negative dimension", "tensor ", t);
      if (MulOverflows(count, static_cast<uint64_t>(d), &count)) {
        return c.Fail(StatusCode::kDataLoss, ": size overflows", "tensor ", t);
      }
    }
  }
  uint64_t bytes = 0;
  if (MulOverflows(count, elem, &bytes) || bytes != tensor->bytes()) {
    return c.Fail(StatusCode::kDataLoss, ": bytes does not match dtype and shape", "tensor ", t);
  }
  if (tensor->storage() == schema::Storage::Constant) {
    const uint64_t section = view.plan()->constants() ? view.plan()->constants()->size() : 0;
    uint64_t end = 0;
    if (AddOverflows(tensor->offset(), bytes, &end) || end > section) {
      return c.Fail(StatusCode::kOutOfRange, ": constant data outside the constant section",
                    "tensor ", t);
    }
    if (tensor->offset() % elem != 0) {
      return c.Fail(StatusCode::kDataLoss, ": misaligned constant", "tensor ", t);
    }
    return Status::Ok();
  }
  if (tensor->storage() != schema::Storage::Arena) {
    return c.Fail(StatusCode::kDataLoss, ": unknown storage", "tensor ", t);
  }
  if (tensor->domain() >= view.num_domains()) {
    return c.Fail(StatusCode::kOutOfRange, ": domain index out of range", "tensor ", t);
  }
  const schema::Domain* domain = view.domain(tensor->domain());
  if (tensor->slots() == 0) return c.Fail(StatusCode::kDataLoss, ": zero slots", "tensor ", t);
  if (tensor->slots() > 1 && tensor->slot_stride() < bytes) {
    return c.Fail(StatusCode::kDataLoss, ": slot stride smaller than the tensor", "tensor ", t);
  }
  const uint64_t align = domain->alignment();
  if (tensor->offset() % align != 0 || (tensor->slots() > 1 && tensor->slot_stride() % align != 0)) {
    return c.Fail(StatusCode::kDataLoss, ": offset or slot stride not aligned to its domain",
                  "tensor ", t);
  }
  uint64_t last = 0, end = 0;
  if (MulOverflows(tensor->slots() - 1, tensor->slot_stride(), &last) ||
      AddOverflows(last, tensor->offset(), &last) || AddOverflows(last, bytes, &end) ||
      end > domain->bytes()) {
    return c.Fail(StatusCode::kOutOfRange, ": slots extend past the end of its domain arena",
                  "tensor ", t);
  }
  return Status::Ok();
}

// A node may only touch tensors its queue can reach (constants: everyone).
Status CheckAccess(Checker& c, const PlanView& view, uint32_t n, int64_t t, bool write) {
  if (t < 0 || static_cast<uint64_t>(t) >= view.num_tensors()) {
    return c.Fail(StatusCode::kOutOfRange, ": tensor index out of range", "node ", n);
  }
  const schema::Tensor* tensor = view.tensor(static_cast<uint32_t>(t));
  if (tensor->storage() == schema::Storage::Constant) {
    if (write) return c.Fail(StatusCode::kDataLoss, ": writes a constant", "node ", n);
    return Status::Ok();
  }
  const schema::Queue* queue = view.queue(view.node(n)->queue());
  if (!QueueReaches(queue, tensor->domain())) {
    return c.Fail(StatusCode::kDataLoss, ": touches a tensor outside its queue's domains",
                  "node ", n);
  }
  return Status::Ok();
}

Status CheckNode(Checker& c, const PlanView& view, uint32_t n) {
  const schema::Node* node = view.node(n);
  if (static_cast<uint32_t>(node->op()) > static_cast<uint32_t>(schema::Op::MAX)) {
    return c.Fail(StatusCode::kUnimplemented, ": unknown op", "node ", n);
  }
  if (node->queue() >= view.num_queues()) {
    return c.Fail(StatusCode::kOutOfRange, ": queue index out of range", "node ", n);
  }
  const schema::Queue* queue = view.queue(node->queue());
  if (queue->nodes() == nullptr || node->position() >= queue->nodes()->size() ||
      queue->nodes()->Get(node->position()) != n) {
    return c.Fail(StatusCode::kDataLoss, ": position does not match its queue's program",
                  "node ", n);
  }
  const uint32_t num_in = node->inputs() ? node->inputs()->size() : 0;
  const uint32_t num_out = node->outputs() ? node->outputs()->size() : 0;
  const uint32_t num_ws = node->workspace() ? node->workspace()->size() : 0;
  if (num_out == 0) return c.Fail(StatusCode::kDataLoss, ": no outputs", "node ", n);
  if (num_in + num_out + num_ws > kMaxNodeTensors) {
    return c.Fail(StatusCode::kResourceExhausted, ": more tensors than BATON_MAX_NODE_TENSORS",
                  "node ", n);
  }
  for (uint32_t i = 0; i < num_in; ++i) {
    const int32_t t = node->inputs()->Get(i);
    if (t == -1) continue;
    BATON_RETURN_IF_ERROR(CheckAccess(c, view, n, t, false));
  }
  for (uint32_t i = 0; i < num_out; ++i) {
    BATON_RETURN_IF_ERROR(CheckAccess(c, view, n, node->outputs()->Get(i), true));
  }
  for (uint32_t i = 0; i < num_ws; ++i) {
    BATON_RETURN_IF_ERROR(CheckAccess(c, view, n, node->workspace()->Get(i), true));
  }
  // Deadlock freedom: with k = inference + stage, every wait must point to an
  // instance at (k', index') < (k, index) lexicographically; queue programs
  // are increasing in node index. Then every dependency points backwards in
  // one total order of instances, so no cycle can exist.
  if (node->waits() != nullptr) {
    for (const schema::Wait* w : *node->waits()) {
      if (w->node() >= view.num_nodes()) {
        return c.Fail(StatusCode::kOutOfRange, ": wait names a node out of range", "node ", n);
      }
      const int64_t weight = static_cast<int64_t>(node->stage()) -
                             static_cast<int64_t>(view.node(w->node())->stage()) + w->lag();
      if (weight < 0 || (weight == 0 && w->node() >= n)) {
        return c.Fail(StatusCode::kDataLoss, ": wait could deadlock (points forward)", "node ",
                      n);
      }
    }
  }
  return Status::Ok();
}

Status CheckQueue(Checker& c, const PlanView& view, uint32_t q) {
  const schema::Queue* queue = view.queue(q);
  if (static_cast<uint32_t>(queue->kind()) > static_cast<uint32_t>(schema::DeviceKind::MAX)) {
    return c.Fail(StatusCode::kDataLoss, ": unknown device kind", "queue ", q);
  }
  if (queue->domains() != nullptr) {
    for (uint32_t d : *queue->domains()) {
      if (d >= view.num_domains()) {
        return c.Fail(StatusCode::kOutOfRange, ": domain index out of range", "queue ", q);
      }
    }
  }
  if (queue->nodes() != nullptr) {
    int64_t previous = -1;
    for (uint32_t n : *queue->nodes()) {
      if (n >= view.num_nodes()) {
        return c.Fail(StatusCode::kOutOfRange, ": node index out of range", "queue ", q);
      }
      if (static_cast<int64_t>(n) <= previous) {
        return c.Fail(StatusCode::kDataLoss, ": program not in increasing node order", "queue ",
                      q);
      }
      if (view.node(n)->queue() != q) {
        return c.Fail(StatusCode::kDataLoss, ": program lists a node of another queue", "queue ",
                      q);
      }
      previous = n;
    }
  }
  return Status::Ok();
}

Status CheckGraphTensors(Checker& c, const PlanView& view,
                         const flatbuffers::Vector<uint32_t>* list, const char* what) {
  if (list == nullptr) return Status::Ok();
  for (uint32_t t : *list) {
    if (t >= view.num_tensors() || view.tensor(t)->storage() != schema::Storage::Arena) {
      return c.Fail(StatusCode::kOutOfRange, ": not an arena tensor in range", what);
    }
  }
  return Status::Ok();
}

}  // namespace

Status PlanView::Load(const void* data, size_t size, PlanView* out_view, LoadError* out_error,
                      const LoadLimits& limits) {
  Checker c(out_error);
  if (out_view == nullptr) return c.Fail(StatusCode::kInvalidArgument, "no output view");
  *out_view = PlanView();
  if (data == nullptr || size < 8) {
    return c.Fail(StatusCode::kDataLoss, "plan is empty or truncated");
  }
  if (reinterpret_cast<uintptr_t>(data) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kFailedPrecondition, "plan bytes must be 16-byte aligned");
  }
  if (!schema::PlanBufferHasIdentifier(data)) {
    return c.Fail(StatusCode::kDataLoss, "not a Baton plan (file identifier is not BTN1)");
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size, limits.max_depth,
                                 limits.max_tables);
  if (!schema::VerifyPlanBuffer(verifier)) {
    return c.Fail(StatusCode::kDataLoss, "plan failed FlatBuffers verification (corrupt or truncated)");
  }
  PlanView view;
  view.plan_ = schema::GetPlan(data);
  if (view.plan_->version() != kPlanFormatVersion) {
    return c.Fail(StatusCode::kFailedPrecondition, ": plan format version is not supported",
                  "version ", view.plan_->version());
  }
  if (view.num_domains() > kMaxDomains) {
    return c.Fail(StatusCode::kResourceExhausted, "more domains than BATON_MAX_DOMAINS");
  }
  if (view.num_queues() == 0 || view.num_queues() > kMaxQueues) {
    return c.Fail(StatusCode::kResourceExhausted, "no queues, or more than BATON_MAX_QUEUES");
  }
  if (view.in_flight() == 0 || view.in_flight() > kMaxInFlight) {
    return c.Fail(StatusCode::kResourceExhausted,
                  "inferences_in_flight is zero or exceeds BATON_MAX_IN_FLIGHT");
  }
  if (view.num_outputs() == 0) return c.Fail(StatusCode::kDataLoss, "plan has no outputs");
  if (view.constants() != nullptr &&
      reinterpret_cast<uintptr_t>(view.constants()) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kDataLoss, "constant section is not 16-byte aligned");
  }
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    if (!IsPowerOfTwo(view.domain(d)->alignment())) {
      return c.Fail(StatusCode::kDataLoss, ": alignment is not a power of two", "domain ", d);
    }
  }
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    BATON_RETURN_IF_ERROR(CheckTensor(c, view, t));
  }
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    BATON_RETURN_IF_ERROR(CheckQueue(c, view, q));
  }
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    BATON_RETURN_IF_ERROR(CheckNode(c, view, n));
  }
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->inputs(), "graph input"));
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->outputs(), "graph output"));
  *out_view = view;
  return Status::Ok();
}

}  // namespace baton
