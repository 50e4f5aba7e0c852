# Runtime-only tests: loader + executor + reference kernels + Linux port on
# plans built by hand with FlatBufferBuilder. They need no planner, so they
# also run in cross builds (aarch64 under qemu-aarch64, see
# ports/linux/aarch64-toolchain.cmake). Included by tests/CMakeLists.txt.

if(NOT TARGET baton_port_linux)
  message(STATUS "runtime-only tests: skipped (they run on Linux; this build has no Linux port)")
  return()
endif()

if(NOT TARGET GTest::gtest)
  # Cross builds: no GoogleTest for the target is installed; build it from
  # the sources Debian ships (libgtest-dev: /usr/src/googletest).
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    set(BATON_GOOGLETEST_SOURCE /usr/src/googletest CACHE PATH "GoogleTest sources for cross builds")
    if(NOT EXISTS ${BATON_GOOGLETEST_SOURCE}/CMakeLists.txt)
      message(FATAL_ERROR "GoogleTest for the target not found and no sources in "
                          "${BATON_GOOGLETEST_SOURCE} (apt-get install libgtest-dev)")
    endif()
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory(${BATON_GOOGLETEST_SOURCE} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    if(NOT TARGET GTest::gtest)  # newer GoogleTest defines the aliases itself
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
endif()
include(GoogleTest)

file(GLOB _baton_runtime_only_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*_test.cc)
add_executable(baton_runtime_only_tests ${_baton_runtime_only_srcs}
               ${CMAKE_CURRENT_LIST_DIR}/test_util.cc)
# qdot_test.cc reaches the kernels' internal integer loops (gemm_core.h).
target_include_directories(baton_runtime_only_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/runtime/src/kernels)
target_link_libraries(baton_runtime_only_tests PRIVATE baton_runtime baton_kernels baton_custom
                      baton_postprocess
                      baton_port_linux GTest::gtest GTest::gtest_main)
target_compile_options(baton_runtime_only_tests PRIVATE ${BATON_WARNINGS})
if(BATON_KERNEL_DISPATCH)  # qdot_test.cc checks the aarch64 dispatch against the CPU
  target_compile_definitions(baton_runtime_only_tests PRIVATE BATON_KERNEL_DISPATCH=1)
endif()
# PRE_TEST: listing the tests needs the emulator in cross builds; do it when
# ctest runs, not at build time.
gtest_discover_tests(baton_runtime_only_tests DISCOVERY_MODE PRE_TEST
  TEST_PREFIX "runtime_only." DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 300)

# The float kernels' conformance tests of tests/kernels (every ISA this CPU
# has, every epilogue and driver, against double-precision references) need no
# planner either: builds without one (aarch64 under qemu-aarch64: portable and
# neon_dotprod) run them here. Host builds run them in baton_kernels_tests
# and do not build this copy (it ran every test twice there: about 20 s of
# ctest and a second compile of the five files).
if(BATON_BUILD_PLANNER)
  return()
endif()
set(_baton_kernel_conformance_srcs conv_epilogue_test.cc pool_test.cc softmax_test.cc
    unary_test.cc layout_test.cc)
list(TRANSFORM _baton_kernel_conformance_srcs PREPEND ${PROJECT_SOURCE_DIR}/tests/kernels/)
add_executable(baton_kernel_conformance_tests ${_baton_kernel_conformance_srcs})
target_include_directories(baton_kernel_conformance_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests
                           ${PROJECT_SOURCE_DIR}/runtime/src/kernels)
target_link_libraries(baton_kernel_conformance_tests PRIVATE baton_kernels GTest::gtest
                      GTest::gtest_main)
target_compile_options(baton_kernel_conformance_tests PRIVATE ${BATON_WARNINGS})
if(BATON_KERNEL_DISPATCH)
  target_compile_definitions(baton_kernel_conformance_tests PRIVATE BATON_KERNEL_DISPATCH=1)
endif()
gtest_discover_tests(baton_kernel_conformance_tests DISCOVERY_MODE PRE_TEST
  TEST_PREFIX "kernels." DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 600)
