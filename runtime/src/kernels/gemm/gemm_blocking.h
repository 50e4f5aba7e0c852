#pragma once
// Cache blocking of the GEMM drivers, shared by gemm_core.cc (workspace
// sizes) and every per-ISA copy of gemm_isa.inc.
//
// Deliberately in an unnamed namespace: each translation unit gets its own
// internal copy, compiled with that unit's instruction set, so no inline
// function here can be shared (and picked by the linker) across ISAs.

#include <stdint.h>

namespace baton {
namespace kernels {
namespace {

// kc x nr of B (one micro-panel) stays in L1 while the micro-kernel walks the
// mc x kc packed A block in L2; the kc x nc packed B block fits in L2/L3.
// Blocks are split evenly so that no block is tiny.
constexpr int64_t kKc = 256;
constexpr int64_t kMcTarget = 128;   // rounded down to a multiple of mr
constexpr int64_t kNcTarget = 1024;  // rounded down to a multiple of nr

constexpr int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
constexpr int64_t RoundUp(int64_t a, int64_t unit) { return (a + unit - 1) / unit * unit; }

// Size of each block when splitting `n` into blocks of at most `max_block`
// (both multiples of `unit`), as evenly as possible.
constexpr int64_t BlockSize(int64_t n, int64_t max_block, int64_t unit) {
  const int64_t blocks = (n + max_block - 1) / max_block;
  return RoundUp((n + blocks - 1) / blocks, unit);
}

// Block sizes of GemmPacked for an mr x nr tile.
struct Blocking {
  int64_t mb, nb, kb;

  constexpr Blocking(int64_t mr, int64_t nr, int64_t m, int64_t n, int64_t k)
      : mb(BlockSize(m, mr * (kMcTarget / mr), mr)),
        nb(BlockSize(n, nr * (kNcTarget / nr), nr)),
        kb(BlockSize(k, kKc, 1)) {}

  // Workspace layout: packed A block, then (64-byte aligned) packed B block.
  constexpr int64_t BOffset() const { return RoundUp(mb * kb, 16); }
  constexpr int64_t Floats() const { return BOffset() + kb * nb; }
};

}  // namespace
}  // namespace kernels
}  // namespace baton
