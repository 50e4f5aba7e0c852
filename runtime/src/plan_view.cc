#include "baton/plan_view.h"

#include <string.h>

#include "baton/kernels.h"
#include "error_text.h"

namespace baton {
namespace {

using internal::TextBuilder;

// Every way Load can fail, in the order of the checks: the id a check passes,
// the status code and the message. A check passes only its one-byte id; the
// codes and messages are the two tables below (a code and a string address at
// each of ~50 checks cost ~250 B of the Cortex-M core's code-size budget).
#define BATON_LOAD_FAILURES(X)                                              \
  X(kNoOutputView, kInvalidArgument, "no output view")                      \
  X(kTruncated, kDataLoss, "plan truncated")                                \
  X(kPlanMisaligned, kFailedPrecondition, "plan not 16-byte aligned")       \
  X(kNoIdentifier, kDataLoss, "no BTN1 identifier")                         \
  X(kBadChecksum, kDataLoss, "bad CRC-32C trailer")                         \
  X(kCorrupt, kDataLoss, "FlatBuffer corrupt")                              \
  X(kVersion, kFailedPrecondition, "unsupported version")                   \
  X(kTooManyDomains, kResourceExhausted, "> BATON_MAX_DOMAINS")             \
  X(kQueueCount, kResourceExhausted, "queues: 0 or > BATON_MAX_QUEUES")     \
  X(kInFlight, kResourceExhausted, "in-flight: 0 or > BATON_MAX_IN_FLIGHT") \
  X(kTooManyInputs, kResourceExhausted, "inputs > BATON_MAX_INPUTS")        \
  X(kNoGraphOutputs, kDataLoss, "plan has no outputs")                      \
  X(kConstantsMisaligned, kDataLoss, "constants misaligned")                \
  X(kDomainAlignment, kDataLoss, "alignment not power of 2")                \
  X(kDType, kDataLoss, "unknown dtype")                                     \
  X(kShapeMisaligned, kDataLoss, "misaligned [long] vector")                \
  X(kRank, kResourceExhausted, "rank > BATON_MAX_RANK")                     \
  X(kNegativeDim, kDataLoss, "negative dimension")                          \
  X(kSizeOverflow, kDataLoss, "size overflows")                             \
  X(kBytes, kDataLoss, "bytes != dtype x shape")                            \
  X(kConstantRange, kOutOfRange, "constant out of range")                   \
  X(kConstantMisaligned, kDataLoss, "misaligned constant")                  \
  X(kStorage, kDataLoss, "unknown storage")                                 \
  X(kDomainIndex, kOutOfRange, "bad domain index")                          \
  X(kSlots, kResourceExhausted, "slots: 0 or > BATON_MAX_IN_FLIGHT")        \
  X(kStride, kDataLoss, "stride < bytes")                                   \
  X(kArenaMisaligned, kDataLoss, "misaligned offset/stride")                \
  X(kArenaRange, kOutOfRange, "slots exceed arena")                         \
  X(kDeviceKind, kDataLoss, "unknown device kind")                          \
  X(kQueueNodes, kResourceExhausted, "> BATON_MAX_QUEUE_NODES")             \
  X(kProgramOrder, kDataLoss, "program not increasing")                     \
  X(kOp, kUnimplemented, "unknown op")                                      \
  X(kStage, kResourceExhausted, "stage > BATON_MAX_STAGE")                  \
  X(kQueueIndex, kOutOfRange, "bad queue index")                            \
  X(kPosition, kDataLoss, "position mismatch")                              \
  X(kNoOutputs, kDataLoss, "no outputs")                                    \
  X(kNodeTensors, kResourceExhausted, "> BATON_MAX_NODE_TENSORS")           \
  X(kTensorIndex, kOutOfRange, "bad tensor index")                          \
  X(kWritesConstant, kDataLoss, "writes a constant")                        \
  X(kUnreachable, kDataLoss, "tensor outside queue domains")                \
  X(kInPlace, kDataLoss, "output overlaps another tensor")                  \
  X(kWaitNode, kOutOfRange, "bad wait node")                                \
  X(kLag, kResourceExhausted, "lag > BATON_MAX_LAG")                        \
  X(kWaitForward, kDataLoss, "wait points forward (deadlock)")              \
  X(kProgramEntries, kDataLoss, "!= node count")                            \
  X(kNotArena, kOutOfRange, "not an arena tensor")

enum class Failure : uint8_t {
#define BATON_FAILURE_ID(id, code, message) id,
  BATON_LOAD_FAILURES(BATON_FAILURE_ID)
#undef BATON_FAILURE_ID
};

constexpr StatusCode kFailureCode[] = {
#define BATON_FAILURE_CODE(id, code, message) StatusCode::code,
    BATON_LOAD_FAILURES(BATON_FAILURE_CODE)
#undef BATON_FAILURE_CODE
};

// The messages in id order, each ending in its NUL (all empty with
// BATON_STRIP_MESSAGES).
constexpr char kFailureMessages[] =
#define BATON_FAILURE_MESSAGE(id, code, message) BATON_MSG(message) "\0"
    BATON_LOAD_FAILURES(BATON_FAILURE_MESSAGE);
#undef BATON_FAILURE_MESSAGE

// Records the first error: a status plus "<what><index>: <message>", where
// <what><index> names the element being checked (set with At).
class Checker {
 public:
  explicit Checker(LoadError* out) : out_(out) {}

  void At(const char* what, uint32_t index) {
    what_ = what;
    index_ = index;
  }

  // Records the failure; false, so that a check can `return c.Fail(...)`.
  bool Fail(Failure failure) {
    const char* message = internal::NthString(kFailureMessages, static_cast<uint32_t>(failure));
    internal::Describe(out_, what_, index_, nullptr, message);
    status_ = Status(kFailureCode[static_cast<uint32_t>(failure)], message);
    return false;
  }

  Status status() const { return status_; }

 private:
  Status status_;
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

bool CheckTensor(Checker& c, const PlanView& view, uint32_t t) {
  c.At("tensor ", t);
  const schema::Tensor* tensor = view.tensor(t);
  const size_t elem = DTypeSize(tensor->dtype());
  if (elem == 0) return c.Fail(Failure::kDType);
  if (!Aligned8(tensor->shape())) return c.Fail(Failure::kShapeMisaligned);
  uint64_t count = 1;
  if (tensor->shape() != nullptr) {
    if (tensor->shape()->size() > kMaxRank) return c.Fail(Failure::kRank);
    for (int64_t d : *tensor->shape()) {
      if (d < 0) return c.Fail(Failure::kNegativeDim);
      if (MulOverflows(count, static_cast<uint64_t>(d), &count)) {
        return c.Fail(Failure::kSizeOverflow);
      }
    }
  }
  uint64_t bytes = 0;
  if (MulOverflows(count, elem, &bytes) || bytes != tensor->bytes()) return c.Fail(Failure::kBytes);
  if (tensor->storage() == schema::Storage::Constant) {
    const uint64_t section = view.plan()->constants() ? view.plan()->constants()->size() : 0;
    uint64_t end = 0;
    if (AddOverflows(tensor->offset(), bytes, &end) || end > section) {
      return c.Fail(Failure::kConstantRange);
    }
    // elem is a power of two (DTypeSize): a mask, not a 64-bit division.
    if ((tensor->offset() & (elem - 1)) != 0) return c.Fail(Failure::kConstantMisaligned);
    return true;
  }
  if (tensor->storage() != schema::Storage::Arena) return c.Fail(Failure::kStorage);
  if (tensor->domain() >= view.num_domains()) return c.Fail(Failure::kDomainIndex);
  const schema::Domain* domain = view.domain(tensor->domain());
  if (tensor->slots() - 1 >= kMaxInFlight) {  // 0 wraps around
    return c.Fail(Failure::kSlots);
  }
  if (tensor->slots() > 1 && tensor->slot_stride() < bytes) return c.Fail(Failure::kStride);
  // Load checked that every domain's alignment is a power of two.
  const uint64_t align_mask = domain->alignment() - 1;
  if ((tensor->offset() & align_mask) != 0 ||
      (tensor->slots() > 1 && (tensor->slot_stride() & align_mask) != 0)) {
    return c.Fail(Failure::kArenaMisaligned);
  }
  uint64_t last = 0, end = 0;
  if (MulOverflows(tensor->slots() - 1, tensor->slot_stride(), &last) ||
      AddOverflows(last, tensor->offset(), &last) || AddOverflows(last, bytes, &end) ||
      end > domain->bytes()) {
    return c.Fail(Failure::kArenaRange);
  }
  return true;
}

// A node may only touch tensors its queue can reach (constants: everyone).
bool CheckAccess(Checker& c, const PlanView& view, uint32_t n, uint32_t t, bool write) {
  if (t >= view.num_tensors()) return c.Fail(Failure::kTensorIndex);
  const schema::Tensor* tensor = view.tensor(t);
  if (tensor->storage() == schema::Storage::Constant) {
    if (write) return c.Fail(Failure::kWritesConstant);
    return true;
  }
  const schema::Queue* queue = view.queue(view.node(n)->queue());
  if (!QueueReaches(queue, tensor->domain())) return c.Fail(Failure::kUnreachable);
  return true;
}

bool CheckNode(Checker& c, const PlanView& view, uint32_t n) {
  c.At("node ", n);
  const schema::Node* node = view.node(n);
  if (static_cast<uint32_t>(node->op()) > static_cast<uint32_t>(schema::Op::MAX)) {
    return c.Fail(Failure::kOp);
  }
  if (node->stage() > kMaxStage) return c.Fail(Failure::kStage);
  if (node->queue() >= view.num_queues()) return c.Fail(Failure::kQueueIndex);
  const schema::Queue* queue = view.queue(node->queue());
  if (queue->nodes() == nullptr || node->position() >= queue->nodes()->size() ||
      queue->nodes()->Get(node->position()) != n) {
    return c.Fail(Failure::kPosition);
  }
  // The node's inputs, outputs and workspace. Inputs read as uint32 (the
  // same bytes as their int32): an absent input's -1 reads as 0xFFFFFFFF and
  // is skipped; any other negative index is >= the tensor count, which
  // CheckAccess rejects.
  using Indices = flatbuffers::Vector<uint32_t>;
  const Indices* const lists[] = {reinterpret_cast<const Indices*>(node->inputs()), node->outputs(),
                                  node->workspace()};
  uint32_t total = 0;
  for (const Indices* list : lists) total += list ? list->size() : 0;
  if (lists[1] == nullptr || lists[1]->size() == 0) return c.Fail(Failure::kNoOutputs);
  if (total > kMaxNodeTensors) return c.Fail(Failure::kNodeTensors);
  // Every tensor the node touches, inputs first: with the access checks,
  // collected for the overlap check below.
  const schema::Tensor* touched[kMaxNodeTensors];
  uint32_t count = 0, first_write = 0;
  for (uint32_t l = 0; l < 3; ++l) {
    const bool write = l > 0;
    if (lists[l] != nullptr) {
      for (uint32_t t : *lists[l]) {
        if (!write && t == UINT32_MAX) continue;
        if (!CheckAccess(c, view, n, t, write)) return false;
        touched[count++] = view.tensor(t);
      }
    }
    if (!write) first_write = count;
  }
  // No kernel runs in place: at every inference, the slot of every output and
  // workspace tensor is disjoint from the slot of every other tensor of its
  // node, so no kernel copies between overlapping ranges or reads what it
  // already overwrote.
  for (uint32_t b = first_write; b < count; ++b) {
    for (uint32_t a = 0; a < b; ++a) {
      if (Overlap(touched[a], touched[b])) return c.Fail(Failure::kInPlace);
    }
  }
  // Deadlock freedom: with k = inference + stage, every wait must point to an
  // instance at (k', index') < (k, index) lexicographically; queue programs
  // are increasing in node index. Then every dependency points backwards in
  // one total order of instances, so no cycle can exist.
  if (node->waits() != nullptr) {
    for (const schema::Wait* w : *node->waits()) {
      if (w->node() >= view.num_nodes()) return c.Fail(Failure::kWaitNode);
      if (w->lag() > kMaxLag) return c.Fail(Failure::kLag);
      // weight = stage(n) + L - stage(m) (no overflow: stage(n), L <= 255).
      const uint32_t reach = node->stage() + w->lag(), from = view.node(w->node())->stage();
      if (from > reach || (from == reach && w->node() >= n)) return c.Fail(Failure::kWaitForward);
    }
  }
  return true;
}

// Adds the length of q's program to *listed. Every node n sits in its own
// queue's program at its position (CheckNode), so n -> (queue, position) is
// one-to-one; when the programs list exactly as many entries as there are
// nodes (checked in Load), every entry is that of a node of its queue, once.
bool CheckQueue(Checker& c, const PlanView& view, uint32_t q, uint32_t* listed) {
  c.At("queue ", q);
  const schema::Queue* queue = view.queue(q);
  if (static_cast<uint32_t>(queue->kind()) > static_cast<uint32_t>(schema::DeviceKind::MAX)) {
    return c.Fail(Failure::kDeviceKind);
  }
  if (queue->domains() != nullptr) {
    for (uint32_t d : *queue->domains()) {
      if (d >= view.num_domains()) return c.Fail(Failure::kDomainIndex);
    }
  }
  if (queue->nodes() != nullptr) {
    if (queue->nodes()->size() > kMaxQueueNodes) return c.Fail(Failure::kQueueNodes);
    *listed += queue->nodes()->size();
    uint32_t next = 0;  // (wraps only past UINT32_MAX, which is no node)
    for (uint32_t n : *queue->nodes()) {
      if (n < next) return c.Fail(Failure::kProgramOrder);
      next = n + 1;
    }
  }
  return true;
}

bool CheckGraphTensors(Checker& c, const PlanView& view, const flatbuffers::Vector<uint32_t>* list,
                       const char* what) {
  if (list == nullptr) return true;
  for (uint32_t t : *list) {
    c.At(what, t);
    if (t >= view.num_tensors() || view.tensor(t)->storage() != schema::Storage::Arena) {
      return c.Fail(Failure::kNotArena);
    }
  }
  return true;
}

// Everything after the FlatBuffers verifier (plan_view.h, checks 2 and 3).
bool CheckContents(Checker& c, const PlanView& view) {
  if (view.plan()->version() != kPlanFormatVersion) {
    c.At("version ", view.plan()->version());
    return c.Fail(Failure::kVersion);
  }
  if (view.num_domains() > kMaxDomains) return c.Fail(Failure::kTooManyDomains);
  if (view.num_queues() == 0 || view.num_queues() > kMaxQueues) return c.Fail(Failure::kQueueCount);
  if (view.in_flight() == 0 || view.in_flight() > kMaxInFlight) return c.Fail(Failure::kInFlight);
  if (view.num_inputs() > kMaxInputs) return c.Fail(Failure::kTooManyInputs);
  if (view.num_outputs() == 0) return c.Fail(Failure::kNoGraphOutputs);
  if (view.constants() != nullptr &&
      reinterpret_cast<uintptr_t>(view.constants()) % kPlanAlignment != 0) {
    return c.Fail(Failure::kConstantsMisaligned);
  }
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    c.At("domain ", d);
    if (!IsPowerOfTwo(view.domain(d)->alignment())) return c.Fail(Failure::kDomainAlignment);
  }
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    if (!CheckTensor(c, view, t)) return false;
  }
  uint32_t listed = 0;
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    if (!CheckQueue(c, view, q, &listed)) return false;
  }
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    if (!CheckNode(c, view, n)) return false;
  }
  if (listed != view.num_nodes()) {
    c.At("program entries ", listed);
    return c.Fail(Failure::kProgramEntries);
  }
  return CheckGraphTensors(c, view, view.plan()->inputs(), "graph input tensor ") &&
         CheckGraphTensors(c, view, view.plan()->outputs(), "graph output tensor ");
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

uint32_t PlanView::num_domains() const { return Size(plan_->domains()); }
uint32_t PlanView::num_queues() const { return Size(plan_->queues()); }
uint32_t PlanView::num_tensors() const { return Size(plan_->tensors()); }
uint32_t PlanView::num_nodes() const { return Size(plan_->nodes()); }
uint32_t PlanView::num_inputs() const { return Size(plan_->inputs()); }
uint32_t PlanView::num_outputs() const { return Size(plan_->outputs()); }
const schema::Domain* PlanView::domain(uint32_t i) const { return plan_->domains()->Get(i); }
const schema::Queue* PlanView::queue(uint32_t i) const { return plan_->queues()->Get(i); }
const schema::Tensor* PlanView::tensor(uint32_t i) const { return plan_->tensors()->Get(i); }
const schema::Node* PlanView::node(uint32_t i) const { return plan_->nodes()->Get(i); }

Status PlanView::Load(const void* data, size_t size, PlanView* out_view, LoadError* out_error,
                      const LoadLimits& limits) {
  Checker c(out_error);
  if (out_view == nullptr) {
    c.Fail(Failure::kNoOutputView);
    return c.status();
  }
  PlanView view;
  // The checks, in order; the first that fails records its status in `c`.
  const bool ok = [&] {
    if (data == nullptr || size < 8 + kPlanTrailerBytes) return c.Fail(Failure::kTruncated);
    if (reinterpret_cast<uintptr_t>(data) % kPlanAlignment != 0) {
      return c.Fail(Failure::kPlanMisaligned);
    }
    if (!schema::PlanBufferHasIdentifier(data)) return c.Fail(Failure::kNoIdentifier);
    // The trailer: CRC-32C of every byte before it, little-endian.
    size -= kPlanTrailerBytes;
    uint32_t checksum;
    memcpy(&checksum, static_cast<const uint8_t*>(data) + size, sizeof(checksum));
    checksum = flatbuffers::EndianScalar(checksum);
#if BATON_VERIFY_PLAN_CHECKSUM
    if (Crc32c(data, size) != checksum) return c.Fail(Failure::kBadChecksum);
#endif
    flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size, limits.max_depth,
                                   limits.max_tables);
    if (!schema::VerifyPlanBuffer(verifier)) return c.Fail(Failure::kCorrupt);
    view.plan_ = schema::GetPlan(data);
    view.checksum_ = checksum;
    return CheckContents(c, view);
  }();
  *out_view = ok ? view : PlanView();
  return c.status();
}

}  // namespace baton
