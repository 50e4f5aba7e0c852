#pragma once
// The plan's integrity checksum: CRC-32C (Castagnoli; reflected polynomial
// 0x82F63B78, initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF; the CRC of the
// ASCII bytes "123456789" is 0xE3069283). The same CRC as iSCSI, ext4 and
// SSE4.2's crc32 instruction, so other tools can compute it with any CRC-32C
// library.
//
// A plan file is the FlatBuffer followed by a 4-byte trailer: the CRC-32C of
// every byte before the trailer (the whole FlatBuffer, constants included),
// stored little-endian. See docs/formats.md, "Checksum".
//
// The implementation is table-driven by nibbles (a 64-byte table, two table
// steps per byte): small enough for the Cortex-M code-size budget, about
// twice as fast as the bitwise loop (tests/bench/checksum_bench.cc).

#include <stddef.h>
#include <stdint.h>

namespace baton {

// Bytes of the checksum trailer at the end of a plan.
inline constexpr size_t kPlanTrailerBytes = 4;

// CRC-32C of `size` bytes. To checksum in pieces, pass the previous result
// as `crc` (start with 0): Crc32c(b, m, Crc32c(a, n)) == CRC of a then b.
// Any thread, any phase; no state.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

// Appends the trailer to a finished FlatBuffer held in a byte container
// (std::string, std::vector<uint8_t>...): the planner's emitter and tests.
// `Bytes` needs data(), size() and push_back(); nothing is instantiated in the
// runtime itself.
template <typename Bytes>
void AppendPlanTrailer(Bytes* bytes) {
  const uint32_t crc = Crc32c(bytes->data(), bytes->size());
  for (uint32_t i = 0; i < kPlanTrailerBytes; ++i) {
    bytes->push_back(static_cast<typename Bytes::value_type>((crc >> (8 * i)) & 0xFF));
  }
}

// Recomputes the trailer of a plan whose other bytes were edited (tests that
// build adversarial plans with a valid checksum).
template <typename Bytes>
void ResealPlan(Bytes* bytes) {
  bytes->resize(bytes->size() - kPlanTrailerBytes);
  AppendPlanTrailer(bytes);
}

}  // namespace baton
