#include "baton/checksum.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>

#include <cstring>
#define BATON_CRC32C_SSE42 1
#endif

namespace baton {
namespace {

// kNibble[i] = CRC-32C of the 4-bit value i (reflected): the state after
// shifting i through the polynomial four times.
constexpr uint32_t kNibble[16] = {
    0x00000000, 0x105EC76F, 0x20BD8EDE, 0x30E349B1, 0x417B1DBC, 0x5125DAD3,
    0x61C69362, 0x7198540D, 0x82F63B78, 0x92A8FC17, 0xA24BB5A6, 0xB21572C9,
    0xC38D26C4, 0xD3D3E1AB, 0xE330A81A, 0xF36E6F75,
};

#if BATON_CRC32C_SSE42
// The host's CRC32 instruction computes exactly this CRC (reflected
// Castagnoli polynomial, no inversions of its own): eight bytes per step
// instead of two table lookups per byte. The planner checksums every plan it
// emits and loads, candidates included. x86-64 hosts only; every other build
// (the firmware ports) keeps the table below.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* p, size_t size,
                                                       uint32_t crc) {
  uint64_t c = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    memcpy(&word, p, sizeof(word));
    c = _mm_crc32_u64(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; size > 0; --size, ++p) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
#endif

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
#if BATON_CRC32C_SSE42
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~Crc32cSse42(p, size, crc);
#endif
  for (size_t i = 0; i < size; ++i) {
    crc ^= p[i];
    crc = (crc >> 4) ^ kNibble[crc & 15];
    crc = (crc >> 4) ^ kNibble[crc & 15];
  }
  return ~crc;
}

}  // namespace baton
