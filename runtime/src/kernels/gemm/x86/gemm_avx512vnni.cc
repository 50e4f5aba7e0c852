// The GEMM drivers for AVX-512F with AVX-512BW and VNNI (built with
// -mavx512f -mavx512bw -mavx512vnni -mavx2 -mfma; only called when the CPU
// and OS support them, see gemm_core.cc): the AVX-512F copy plus the int8
// vpdpbusd kernel (QGemmQuads).
#define BATON_GEMM_NS isa_avx512vnni
#include "../gemm_isa.inc"
