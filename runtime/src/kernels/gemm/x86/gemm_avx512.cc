// The GEMM drivers for AVX-512F (built with -mavx512f -mavx2 -mfma; only
// called when the CPU and OS support it, see gemm_core.cc).
#define BATON_GEMM_NS isa_avx512
#include "../gemm_isa.inc"
