#include "baton/plan_view.h"

#include <string.h>

#include "baton/kernels.h"
#include "error_text.h"

namespace baton {
namespace {

using internal::TextBuilder;

// Records the first error: a status plus "<what><index>: <message>", where
// <what><index> names the element being checked (set with At).
class Checker {
 public:
  explicit Checker(LoadError* out) : out_(out) {}

  void At(const char* what, uint32_t index) {
    what_ = what;
    index_ = index;
  }

  Status Fail(StatusCode code, const char* message) {
    internal::Describe(out_, what_, index_, nullptr, message);
    return Status(code, message);
  }

 private:
  LoadError* out_;
  const char* what_ = nullptr;
  uint32_t index_ = 0;
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

// FlatBuffers' verifier checks only the 4-byte alignment of a vector's length
// prefix. Shapes are read in place everywhere, so they must be 8-byte aligned
// (plans are loaded at 16-byte aligned addresses, and the builder aligns
// them); the kernels read the other [long] vectors (Slice, Pad) with memcpy.
bool Aligned8(const flatbuffers::Vector<int64_t>* v) {
  return v == nullptr || reinterpret_cast<uintptr_t>(v->data()) % 8 == 0;
}

static_assert(kMaxInFlight <= 0xFFFF, "Overlap multiplies two slot counts in 32 bits");

// The first byte of slot (i mod slots) of an arena tensor.
uint64_t SlotAt(const schema::Tensor* t, uint32_t i) {
  return t->offset() + (i % t->slots()) * t->slot_stride();
}

// True when two arena tensors of one node share a byte in the slots some
// inference uses together: inference i uses slot i mod S of each, so slot
// (i mod Sa) of a against slot (i mod Sb) of b for every i in [0, Sa * Sb), a
// multiple of lcm(Sa, Sb): exact, and at most BATON_MAX_IN_FLIGHT^2 steps
// (CheckTensor keeps slots <= BATON_MAX_IN_FLIGHT). Multi-slot tensors may
// share bytes in slots that no single inference uses together
// (docs/execution.md). A tensor of 0 bytes is an empty range: it overlaps
// nothing.
bool Overlap(const schema::Tensor* a, const schema::Tensor* b) {
  if (a->storage() != schema::Storage::Arena || b->storage() != schema::Storage::Arena ||
      a->domain() != b->domain()) {
    return false;
  }
  for (uint32_t i = 0; i < a->slots() * b->slots(); ++i) {
    const uint64_t x = SlotAt(a, i), y = SlotAt(b, i);
    if (x < y + b->bytes() && y < x + a->bytes()) return true;
  }
  return false;
}

bool QueueReaches(const schema::Queue* queue, uint32_t domain) {
  if (queue->domains() == nullptr) return false;
  for (uint32_t d : *queue->domains()) {
    if (d == domain) return true;
  }
  return false;
}

Status CheckTensor(Checker& c, const PlanView& view, uint32_t t) {
  c.At("tensor ", t);
  const schema::Tensor* tensor = view.tensor(t);
  const size_t elem = DTypeSize(tensor->dtype());
  if (elem == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown dtype"));
  if (!Aligned8(tensor->shape())) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("misaligned [long] vector"));
  }
  uint64_t count = 1;
  if (tensor->shape() != nullptr) {
    if (tensor->shape()->size() > kMaxRank) {
      return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("rank > BATON_MAX_RANK"));
    }
    for (int64_t d : *tensor->shape()) {
      if (d < 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("negative dimension"));
      if (MulOverflows(count, static_cast<uint64_t>(d), &count)) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("size overflows"));
      }
    }
  }
  uint64_t bytes = 0;
  if (MulOverflows(count, elem, &bytes) || bytes != tensor->bytes()) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("bytes != dtype x shape"));
  }
  if (tensor->storage() == schema::Storage::Constant) {
    const uint64_t section = view.plan()->constants() ? view.plan()->constants()->size() : 0;
    uint64_t end = 0;
    if (AddOverflows(tensor->offset(), bytes, &end) || end > section) {
      return c.Fail(StatusCode::kOutOfRange, BATON_MSG("constant out of range"));
    }
    if (tensor->offset() % elem != 0) {
      return c.Fail(StatusCode::kDataLoss, BATON_MSG("misaligned constant"));
    }
    return Status::Ok();
  }
  if (tensor->storage() != schema::Storage::Arena) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown storage"));
  }
  if (tensor->domain() >= view.num_domains()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad domain index"));
  }
  const schema::Domain* domain = view.domain(tensor->domain());
  if (tensor->slots() - 1 >= kMaxInFlight) {  // 0 wraps around
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("slots: 0 or > BATON_MAX_IN_FLIGHT"));
  }
  if (tensor->slots() > 1 && tensor->slot_stride() < bytes) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("stride < bytes"));
  }
  const uint64_t align = domain->alignment();
  if (tensor->offset() % align != 0 || (tensor->slots() > 1 && tensor->slot_stride() % align != 0)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("misaligned offset/stride"));
  }
  uint64_t last = 0, end = 0;
  if (MulOverflows(tensor->slots() - 1, tensor->slot_stride(), &last) ||
      AddOverflows(last, tensor->offset(), &last) || AddOverflows(last, bytes, &end) ||
      end > domain->bytes()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("slots exceed arena"));
  }
  return Status::Ok();
}

// A node may only touch tensors its queue can reach (constants: everyone).
Status CheckAccess(Checker& c, const PlanView& view, uint32_t n, uint32_t t, bool write) {
  if (t >= view.num_tensors()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad tensor index"));
  }
  const schema::Tensor* tensor = view.tensor(t);
  if (tensor->storage() == schema::Storage::Constant) {
    if (write) return c.Fail(StatusCode::kDataLoss, BATON_MSG("writes a constant"));
    return Status::Ok();
  }
  const schema::Queue* queue = view.queue(view.node(n)->queue());
  if (!QueueReaches(queue, tensor->domain())) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("tensor outside queue domains"));
  }
  return Status::Ok();
}

Status CheckNode(Checker& c, const PlanView& view, uint32_t n) {
  c.At("node ", n);
  const schema::Node* node = view.node(n);
  if (static_cast<uint32_t>(node->op()) > static_cast<uint32_t>(schema::Op::MAX)) {
    return c.Fail(StatusCode::kUnimplemented, BATON_MSG("unknown op"));
  }
  if (node->stage() > kMaxStage) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("stage > BATON_MAX_STAGE"));
  }
  if (node->queue() >= view.num_queues()) {
    return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad queue index"));
  }
  const schema::Queue* queue = view.queue(node->queue());
  if (queue->nodes() == nullptr || node->position() >= queue->nodes()->size() ||
      queue->nodes()->Get(node->position()) != n) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("position mismatch"));
  }
  const uint32_t num_in = node->inputs() ? node->inputs()->size() : 0;
  const uint32_t num_out = node->outputs() ? node->outputs()->size() : 0;
  const uint32_t num_ws = node->workspace() ? node->workspace()->size() : 0;
  if (num_out == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("no outputs"));
  if (num_in + num_out + num_ws > kMaxNodeTensors) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("> BATON_MAX_NODE_TENSORS"));
  }
  // Every tensor the node touches, inputs first: with the access checks,
  // collected for the overlap check below.
  const schema::Tensor* touched[kMaxNodeTensors];
  uint32_t count = 0, first_write = 0;
  for (uint32_t i = 0; i < num_in + num_out + num_ws; ++i) {
    const bool write = i >= num_in;
    // As uint32: an absent input's -1 reads as 0xFFFFFFFF and is skipped; any
    // other negative input index is >= the tensor count, which CheckAccess
    // rejects.
    const uint32_t t = !write ? static_cast<uint32_t>(node->inputs()->Get(i))
                       : i < num_in + num_out ? node->outputs()->Get(i - num_in)
                                              : node->workspace()->Get(i - num_in - num_out);
    if (!write && t == UINT32_MAX) continue;
    BATON_RETURN_IF_ERROR(CheckAccess(c, view, n, t, write));
    if (!write) first_write = count + 1;
    touched[count++] = view.tensor(t);
  }
  // No kernel runs in place: at every inference, the slot of every output and
  // workspace tensor is disjoint from the slot of every other tensor of its
  // node, so no kernel copies between overlapping ranges or reads what it
  // already overwrote.
  for (uint32_t b = first_write; b < count; ++b) {
    for (uint32_t a = 0; a < b; ++a) {
      if (Overlap(touched[a], touched[b])) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("output overlaps another tensor"));
      }
    }
  }
  // Deadlock freedom: with k = inference + stage, every wait must point to an
  // instance at (k', index') < (k, index) lexicographically; queue programs
  // are increasing in node index. Then every dependency points backwards in
  // one total order of instances, so no cycle can exist.
  if (node->waits() != nullptr) {
    for (const schema::Wait* w : *node->waits()) {
      if (w->node() >= view.num_nodes()) {
        return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad wait node"));
      }
      if (w->lag() > kMaxLag) {
        return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("lag > BATON_MAX_LAG"));
      }
      // weight = stage(n) + L - stage(m) (no overflow: stage(n), L <= 255).
      const uint32_t reach = node->stage() + w->lag(), from = view.node(w->node())->stage();
      if (from > reach || (from == reach && w->node() >= n)) {
        return c.Fail(StatusCode::kDataLoss, BATON_MSG("wait points forward (deadlock)"));
      }
    }
  }
  return Status::Ok();
}

// Adds the length of q's program to *listed. Every node n sits in its own
// queue's program at its position (CheckNode), so n -> (queue, position) is
// one-to-one; when the programs list exactly as many entries as there are
// nodes (checked in Load), every entry is that of a node of its queue, once.
Status CheckQueue(Checker& c, const PlanView& view, uint32_t q, uint32_t* listed) {
  c.At("queue ", q);
  const schema::Queue* queue = view.queue(q);
  if (static_cast<uint32_t>(queue->kind()) > static_cast<uint32_t>(schema::DeviceKind::MAX)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("unknown device kind"));
  }
  if (queue->domains() != nullptr) {
    for (uint32_t d : *queue->domains()) {
      if (d >= view.num_domains()) {
        return c.Fail(StatusCode::kOutOfRange, BATON_MSG("bad domain index"));
      }
    }
  }
  if (queue->nodes() != nullptr) {
    if (queue->nodes()->size() > kMaxQueueNodes) {
      return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("> BATON_MAX_QUEUE_NODES"));
    }
    *listed += queue->nodes()->size();
    uint32_t next = 0;  // (wraps only past UINT32_MAX, which is no node)
    for (uint32_t n : *queue->nodes()) {
      if (n < next) return c.Fail(StatusCode::kDataLoss, BATON_MSG("program not increasing"));
      next = n + 1;
    }
  }
  return Status::Ok();
}

Status CheckGraphTensors(Checker& c, const PlanView& view,
                         const flatbuffers::Vector<uint32_t>* list, const char* what) {
  if (list == nullptr) return Status::Ok();
  for (uint32_t t : *list) {
    c.At(what, t);
    if (t >= view.num_tensors() || view.tensor(t)->storage() != schema::Storage::Arena) {
      return c.Fail(StatusCode::kOutOfRange, BATON_MSG("not an arena tensor"));
    }
  }
  return Status::Ok();
}

}  // namespace

namespace internal {

void Describe(LoadError* out, const char* what, uint32_t index, const char* name,
              const char* message) {
  if (out == nullptr) return;
  TextBuilder text(out->text, sizeof(out->text));
  if (what != nullptr) {
    text.Add(what).Add(index);
    if (name != nullptr) text.Add(" '").Add(name).Add("'");
    text.Add(": ");
  }
  text.Add(message);
}

}  // namespace internal

Status PlanView::Load(const void* data, size_t size, PlanView* out_view, LoadError* out_error,
                      const LoadLimits& limits) {
  Checker c(out_error);
  if (out_view == nullptr) return c.Fail(StatusCode::kInvalidArgument, BATON_MSG("no output view"));
  *out_view = PlanView();
  if (data == nullptr || size < 8 + kPlanTrailerBytes) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("plan truncated"));
  }
  if (reinterpret_cast<uintptr_t>(data) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kFailedPrecondition, BATON_MSG("plan not 16-byte aligned"));
  }
  if (!schema::PlanBufferHasIdentifier(data)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("no BTN1 identifier"));
  }
  // The trailer: CRC-32C of every byte before it, little-endian.
  size -= kPlanTrailerBytes;
  uint32_t checksum;
  memcpy(&checksum, static_cast<const uint8_t*>(data) + size, sizeof(checksum));
  checksum = flatbuffers::EndianScalar(checksum);
#if BATON_VERIFY_PLAN_CHECKSUM
  if (Crc32c(data, size) != checksum) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("bad CRC-32C trailer"));
  }
#endif
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size, limits.max_depth,
                                 limits.max_tables);
  if (!schema::VerifyPlanBuffer(verifier)) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("FlatBuffer corrupt"));
  }
  PlanView view;
  view.plan_ = schema::GetPlan(data);
  view.checksum_ = checksum;
  if (view.plan_->version() != kPlanFormatVersion) {
    c.At("version ", view.plan_->version());
    return c.Fail(StatusCode::kFailedPrecondition, BATON_MSG("unsupported version"));
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
  if (view.num_inputs() > kMaxInputs) {
    return c.Fail(StatusCode::kResourceExhausted, BATON_MSG("inputs > BATON_MAX_INPUTS"));
  }
  if (view.num_outputs() == 0) return c.Fail(StatusCode::kDataLoss, BATON_MSG("plan has no outputs"));
  if (view.constants() != nullptr &&
      reinterpret_cast<uintptr_t>(view.constants()) % kPlanAlignment != 0) {
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("constants misaligned"));
  }
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    c.At("domain ", d);
    if (!IsPowerOfTwo(view.domain(d)->alignment())) {
      return c.Fail(StatusCode::kDataLoss, BATON_MSG("alignment not power of 2"));
    }
  }
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    BATON_RETURN_IF_ERROR(CheckTensor(c, view, t));
  }
  uint32_t listed = 0;
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    BATON_RETURN_IF_ERROR(CheckQueue(c, view, q, &listed));
  }
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    BATON_RETURN_IF_ERROR(CheckNode(c, view, n));
  }
  if (listed != view.num_nodes()) {
    c.At("program entries ", listed);
    return c.Fail(StatusCode::kDataLoss, BATON_MSG("!= node count"));
  }
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->inputs(), "graph input tensor "));
  BATON_RETURN_IF_ERROR(CheckGraphTensors(c, view, view.plan_->outputs(), "graph output tensor "));
  *out_view = view;
  return Status::Ok();
}

}  // namespace baton
