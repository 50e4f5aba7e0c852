# Benchmarks (google-benchmark), built but not registered with ctest.
# Included by tests/CMakeLists.txt. Each benchmark owns one block below;
# append new blocks rather than editing another's.

# Sanitizer builds (tools/test.sh's ASan+UBSan pass) build no benchmarks:
# they would measure the sanitizers.
if(BATON_SANITIZE)
  return()
endif()

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

# --- baton_pack_bench: the arena packer on the MiniMalloc set (needs
# ../shared/bench/minimalloc), synthetic 1k/10k-buffer problems and tilings.
# Run: build/tests/baton_pack_bench [--benchmark_filter=MiniMalloc/]
# The table in docs/packing.md comes from it.
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(baton_pack_bench ${CMAKE_CURRENT_LIST_DIR}/pack_bench.cc)
  target_link_libraries(baton_pack_bench PRIVATE baton_pack benchmark::benchmark)
  target_compile_options(baton_pack_bench PRIVATE ${BATON_WARNINGS})
  target_compile_definitions(baton_pack_bench PRIVATE BATON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
else()
  message(STATUS "google-benchmark not found: baton_pack_bench not built")
endif()
# --- end baton_pack_bench

# --- baton_checksum_bench: the plan's CRC-32C and PlanView::Load, bytes/s
# (docs/execution.md, "Trust model"). Run: build/tests/baton_checksum_bench
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(baton_checksum_bench ${CMAKE_CURRENT_LIST_DIR}/checksum_bench.cc)
  target_link_libraries(baton_checksum_bench PRIVATE baton_runtime benchmark::benchmark)
  target_compile_options(baton_checksum_bench PRIVATE ${BATON_WARNINGS})
else()
  message(STATUS "google-benchmark not found: baton_checksum_bench not built")
endif()
# --- end baton_checksum_bench
