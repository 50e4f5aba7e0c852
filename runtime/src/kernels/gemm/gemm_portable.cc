// The GEMM drivers compiled with the build's own flags: the only copy on
// cross builds, the fallback of the x86-64 dispatch.
#define BATON_GEMM_NS isa_portable
#include "gemm_isa.inc"
