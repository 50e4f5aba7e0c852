# Benchmarks (google-benchmark), built but not registered with ctest.
# Included by tests/CMakeLists.txt. Each benchmark owns one block below;
# append new blocks rather than editing another's.

# --- baton_kernels_bench: float32 kernels (conv, depthwise, gemm, whole-net
# conv stacks). Run: build/tests/baton_kernels_bench [--benchmark_filter=...]
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(baton_kernels_bench ${CMAKE_CURRENT_LIST_DIR}/kernels_bench.cc)
  target_include_directories(baton_kernels_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(baton_kernels_bench PRIVATE baton_kernels benchmark::benchmark)
  target_compile_options(baton_kernels_bench PRIVATE ${BATON_WARNINGS})
else()
  message(STATUS "google-benchmark not found: baton_kernels_bench not built")
endif()
# --- end baton_kernels_bench
