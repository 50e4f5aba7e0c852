# libFuzzer targets (docs/fuzzing.md); only with -DBATON_FUZZ=ON (clang).
# Included by tests/CMakeLists.txt. Binaries go to ${CMAKE_BINARY_DIR}/fuzz/bin,
# seed corpora (made by make_seeds.sh, target baton_fuzz_seeds, part of ALL)
# to ${CMAKE_BINARY_DIR}/fuzz/seeds/<target>. CTest fuzz.<target>.corpus runs
# each target once over its seeds and the committed regressions
# (regressions/<target>/: every input that once crashed it); CI's bounded
# fuzzing is run_fuzzers.sh (tools/test.sh).
if(NOT BATON_FUZZ)
  return()
endif()

set(_fuzz_dir ${CMAKE_BINARY_DIR}/fuzz)

# fuzz_plan runs a copy of the runtime and kernels built without the plan
# checksum check, so mutated plans reach the semantic checks and the kernels.
# Portable GEMM only (the ISA copies need their own per-file flags).
function(_baton_fuzz_abs out dir)
  set(_r)
  foreach(_s ${ARGN})
    if(_s MATCHES "/x86/")
      continue()
    endif()
    if(NOT IS_ABSOLUTE ${_s})
      set(_s ${dir}/${_s})
    endif()
    list(APPEND _r ${_s})
  endforeach()
  set(${out} ${_r} PARENT_SCOPE)
endfunction()
get_target_property(_rt_srcs baton_runtime SOURCES)
get_target_property(_k_srcs baton_kernels SOURCES)
_baton_fuzz_abs(_rt_srcs ${PROJECT_SOURCE_DIR}/runtime ${_rt_srcs})
_baton_fuzz_abs(_k_srcs ${PROJECT_SOURCE_DIR}/runtime ${_k_srcs})
add_library(baton_runtime_unchecked STATIC ${_rt_srcs} ${_k_srcs})
target_include_directories(baton_runtime_unchecked PUBLIC ${PROJECT_SOURCE_DIR}/runtime/include
                           PRIVATE ${PROJECT_SOURCE_DIR}/runtime/src/kernels)
target_link_libraries(baton_runtime_unchecked PUBLIC baton_schema)
target_compile_definitions(baton_runtime_unchecked PUBLIC BATON_VERIFY_PLAN_CHECKSUM=0)
target_compile_options(baton_runtime_unchecked PRIVATE ${BATON_WARNINGS} -fno-exceptions -fno-rtti)

function(baton_fuzz_target name src)
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${src})
  target_link_libraries(${name} PRIVATE ${ARGN})
  target_compile_options(${name} PRIVATE ${BATON_WARNINGS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_fuzz_dir}/bin)
  set(_dirs ${_fuzz_dir}/seeds/${name})
  if(IS_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/regressions/${name})
    list(APPEND _dirs ${CMAKE_CURRENT_LIST_DIR}/regressions/${name})
  endif()
  add_test(NAME fuzz.${name}.corpus COMMAND ${name} -runs=0 -timeout=60 ${_dirs})
  set_tests_properties(fuzz.${name}.corpus PROPERTIES TIMEOUT 600)
endfunction()

baton_fuzz_target(fuzz_plan fuzz_plan.cc baton_runtime_unchecked)
baton_fuzz_target(fuzz_plan_checked fuzz_plan.cc baton_kernels)
set(_i 1)
foreach(_t onnx graph_json target_json npy)
  baton_fuzz_target(fuzz_${_t} fuzz_import.cc baton_planner)
  target_compile_definitions(fuzz_${_t} PRIVATE BATON_FUZZ_TARGET=${_i})
  math(EXPR _i "${_i} + 1")
endforeach()

add_custom_command(OUTPUT ${_fuzz_dir}/seeds/.stamp
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/make_seeds.sh $<TARGET_FILE:baton> ${_fuzz_dir}
  DEPENDS baton ${CMAKE_CURRENT_LIST_DIR}/make_seeds.sh
          ${PROJECT_SOURCE_DIR}/tests/e2e/make_graphs.py
          ${PROJECT_SOURCE_DIR}/tests/planner/import/make_onnx_cases.py
  COMMENT "Fuzz seed corpora (tests/fuzz/make_seeds.sh)")
add_custom_target(baton_fuzz_seeds ALL DEPENDS ${_fuzz_dir}/seeds/.stamp)
