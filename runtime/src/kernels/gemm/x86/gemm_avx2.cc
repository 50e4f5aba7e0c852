// The GEMM drivers for AVX2 + FMA (built with -mavx2 -mfma; only called
// when the CPU has both, see gemm_core.cc).
#define BATON_GEMM_NS isa_avx2
#include "../gemm_isa.inc"
