# The Arm NN foreign-runtime plugin (ports/linux, baton/linux/armnn_plugin.h):
# ONNX regions written by make_armnn_cases.py with ONNX Runtime's outputs
# (tools/ort_ref.py, $BATON_ORT_DIR), run as Subgraph nodes through the
# Executor and the Linux port. Only when baton_armnn is built (Arm NN found).
# Included by tests/CMakeLists.txt. A few seconds.
if(NOT TARGET baton_armnn)
  message(STATUS "Arm NN plugin tests: skipped (no Arm NN)")
  return()
endif()

set(_armnn_cases ${CMAKE_BINARY_DIR}/armnn_cases)
add_test(NAME armnn.make_cases
  COMMAND ${BATON_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/make_armnn_cases.py ${_armnn_cases})
set_tests_properties(armnn.make_cases PROPERTIES FIXTURES_SETUP armnn_cases TIMEOUT 120)

add_executable(baton_armnn_tests ${CMAKE_CURRENT_LIST_DIR}/armnn_plugin_test.cc)
target_include_directories(baton_armnn_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/runtime_only)
target_link_libraries(baton_armnn_tests PRIVATE baton_armnn baton_runtime baton_kernels
                      baton_port_linux GTest::gtest GTest::gtest_main)
target_compile_options(baton_armnn_tests PRIVATE ${BATON_WARNINGS})
target_compile_definitions(baton_armnn_tests PRIVATE BATON_ARMNN_CASES="${_armnn_cases}"
                           BATON_TOOL="$<TARGET_FILE:baton>")
add_dependencies(baton_armnn_tests baton)  # BatonRunRunsArmnnRegions
gtest_discover_tests(baton_armnn_tests TEST_PREFIX "armnn." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED armnn_cases)

# The planner's regions (armnn_soc.json) run by the plugin through `baton run`,
# pipelined, against ONNX Runtime and the all-CPU plan.
add_test(NAME armnn.planned_regions
  COMMAND ${BATON_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/planned_regions.py $<TARGET_FILE:baton>
          ${CMAKE_BINARY_DIR}/armnn_planned_regions)
set_tests_properties(armnn.planned_regions PROPERTIES TIMEOUT 180)
