#include "baton/plan_view.h"

#include "baton/kernels.h"
#include "error_text.h"

namespace baton {
namespace {

using internal::TextBuilder;

// Records the first error: a status plus "<what><index>: <message>".
class Checker {
 public:
  explicit Checker(LoadError* out) : out_(out) {}

  Status Fail(StatusCode code, const char* message, const char* what = nullptr,
              uint32_t index = 0) {
    if (out_ != nullptr) {
      TextBuilder text(out_->text, sizeof(out_->text));
      if (what != nullptr) text.Add(what).Add(index).Add(": ");
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
  if (elem == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown dtype"), "tensor ", t);
  uint64_t count = 1;
  if (const auto* shape = tensor->shape()) {
    if (shape->size() > kMaxRank) {
      return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("rank > BATON_MAX_RANK"), "tensor ", t);
    }
    for (uint32_t i = 0; i < shape->size(); ++i) {
      const int64_t d = ReadLong(shape, i);
      if (d < 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("negative dimension"), "tensor ", t);
      if (MulOverflows(count, static_cast<uint64_t>(d), &count)) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("size overflows"), "tensor ", t);
      }
    }
  }
  uint64_t bytes = 0;
  if (MulOverflows(count, elem, &bytes) || bytes != tensor->bytes()) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("bytes != dtype x shape"), "tensor ", t);
  }
  if (tensor->storage() == schema::Storage::Constant) {
    const uint64_t section = view.plan()->constants() ? view.plan()->constants()->size() : 0;
    uint64_t end = 0;
    if (AddOverflows(tensor->offset(), bytes, &end) || end > section) {
      return c.Fail(StatusCode::kOutOfRange, BATON_MSG("constant out of range"),
                    "tensor ", t);
    }
    if (tensor->offset() % elem != 0) {
      return c.Fail(StatusCode::kDataLoss, BATON_MSG("misaligned constant"), "tensor ", t);
    }
    return Status::Ok();
  }
  if (tensor->storage() != schema::Storage::Arena) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown storage"), "tensor ", t);
  }
  if (tensor->domain() >= view.num_domains()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad domain index"), "tensor ", t);
  }
  const schema::Domain* domain = view.domain(tensor->domain());
  if (tensor->slots() == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("zero slots"), "tensor ", t);
  if (tensor->slots() > 1 && tensor->slot_stride() < bytes) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("stride < bytes"), "tensor ", t);
  }
  const uint64_t align = domain->alignment();
  if (tensor->offset() % align != 0 || (tensor->slots() > 1 && tensor->slot_stride() % align != 0)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("misaligned offset/stride"),
                  "tensor ", t);
  }
  uint64_t last = 0, end = 0;
  if (MulOverflows(tensor->slots() - 1, tensor->slot_stride(), &last) ||
      AddOverflows(last, tensor->offset(), &last) || AddOverflows(last, bytes, &end) ||
      end > domain->bytes()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("slots exceed arena"),
                  "tensor ", t);
  }
  return Status::Ok();
}

// A node may only touch tensors its queue can reach (constants: everyone).
Status CheckAccess(Checker& c, const PlanView& view, uint32_t n, int64_t t, bool write) {
  if (t < 0 || static_cast<uint64_t>(t) >= view.num_tensors()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad tensor index"), "node ", n);
  }
  const schema::Tensor* tensor = view.tensor(static_cast<uint32_t>(t));
  if (tensor->storage() == schema::Storage::Constant) {
    if (write) return c.Fail(StatusCode::kDataLoss, BATON_MSG("writes a constant"), "node ", n);
    return Status::Ok();
  }
  const schema::Queue* queue = view.queue(view.node(n)->queue());
  if (!QueueReaches(queue, tensor->domain())) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("tensor outside queue domains"),
                  "node ", n);
  }
  return Status::Ok();
}

Status CheckNode(Checker& c, const PlanView& view, uint32_t n) {
  const schema::Node* node = view.node(n);
  if (static_cast<uint32_t>(node->op()) > static_cast<uint32_t>(schema::Op::MAX)) {
    return c.Fail(StatusCode::kUnimplemented, BATON_MSG("unknown op"), "node ", n);
  }
  if (node->queue() >= view.num_queues()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad queue index"), "node ", n);
  }
  const schema::Queue* queue = view.queue(node->queue());
  if (queue->nodes() == nullptr || node->position() >= queue->nodes()->size() ||
      queue->nodes()->Get(node->position()) != n) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("position mismatch"),
                  "node ", n);
  }
  const uint32_t num_in = node->inputs() ? node->inputs()->size() : 0;
  const uint32_t num_out = node->outputs() ? node->outputs()->size() : 0;
  const uint32_t num_ws = node->workspace() ? node->workspace()->size() : 0;
  if (num_out == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("no outputs"), "node ", n);
  if (num_in + num_out + num_ws > kMaxNodeTensors) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("> BATON_MAX_NODE_TENSORS"),
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
        return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad wait node"), "node ", n);
      }
      const int64_t weight = static_cast<int64_t>(node->stage()) -
                             static_cast<int64_t>(view.node(w->node())->stage()) + w->lag();
      if (weight < 0 || (weight == 0 && w->node() >= n)) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("wait points forward (deadlock)"), "node ",
                      n);
      }
    }
  }
  return Status::Ok();
}

Status CheckQueue(Checker& c, const PlanView& view, uint32_t q) {
  const schema::Queue* queue = view.queue(q);
  if (static_cast<uint32_t>(queue->kind()) > static_cast<uint32_t>(schema::DeviceKind::MAX)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown device kind"), "queue ", q);
  }
  if (queue->domains() != nullptr) {
    for (uint32_t d : *queue->domains()) {
      if (d >= view.num_domains()) {
        return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad domain index"), "queue ", q);
      }
    }
  }
  if (queue->nodes() != nullptr) {
    int64_t previous = -1;
    for (uint32_t n : *queue->nodes()) {
      if (n >= view.num_nodes()) {
        return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad node index"), "queue ", q);
      }
      if (static_cast<int64_t>(n) <= previous) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("program not increasing"), "queue ",
                      q);
      }
      if (view.node(n)->queue() != q) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("program lists foreign node"), "queue ",
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
      return c.Fail(StatusCode::kOutOfRange, BATON_MSG("not an arena tensor"), what, t);
    }
  }
  return Status::Ok();
}

}  // namespace

Status PlanView::Load(const void* data, size_t size, PlanView* out_view, LoadError* out_error,
                      const LoadLimits& limits) {
  Checker c(out_error);
  if (out_view == nullptr) return c.Fail(StatusCode::kInvalidArgument, BATON_MSG("no output view"));
  *out_view = PlanView();
  if (data == nullptr || size < 8) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("plan truncated"));
  }
  if (reinterpret_cast<uintptr_t>(data) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kFailedPrecondition, BATON_MSG("plan not 16-byte aligned"));
  }
  if (!schema::PlanBufferHasIdentifier(data)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("bad file identifier (not BTN1)"));
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size, limits.max_depth,
                                 limits.max_tables);
  if (!schema::VerifyPlanBuffer(verifier)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("plan corrupt (verifier)"));
  }
  PlanView view;
  view.plan_ = schema::GetPlan(data);
  if (view.plan_->version() != kPlanFormatVersion) {
    return c.Fail(StatusCode::kFailedPrecondition, BATON_MSG("unsupported version"),
                  "version ", view.plan_->version());
  }
  if (view.num_domains() > kMaxDomains) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("> BATON_MAX_DOMAINS"));
  }
  if (view.num_queues() == 0 || view.num_queues() > kMaxQueues) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("queues: 0 or > BATON_MAX_QUEUES"));
  }
  if (view.in_flight() == 0 || view.in_flight() > kMaxInFlight) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("in-flight: 0 or > BATON_MAX_IN_FLIGHT"));
  }
  if (view.num_outputs() == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("plan has no outputs"));
  if (view.constants() != nullptr &&
      reinterpret_cast<uintptr_t>(view.constants()) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("constants misaligned"));
  }
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    if (!IsPowerOfTwo(view.domain(d)->alignment())) {
      return c.Fail(StatusCode::kDataLoss, BATON_MSG("alignment not a power of 2"), "domain ", d);
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
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->inputs(), "graph input tensor "));
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->outputs(), "graph output tensor "));
  *out_view = view;
  return Status::Ok();
}

}  // namespace baton
