// The GEMM drivers for aarch64 NEON with the dot-product extension (built
// with -march=armv8.2-a+dotprod; only called when the CPU has it, see
// gemm_core.cc): the portable NEON copy plus the int8 SDOT kernel
// (QGemmQuads).
#define BATON_GEMM_NS isa_neon_dotprod
#include "../gemm_isa.inc"
