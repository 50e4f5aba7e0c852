# ONNX Runtime as an independent reference (tools/ort_ref.py, tools/ort/run.js;
# docs/performance.md). Included by tests/CMakeLists.txt.
#
#   ort.matches_torch  the harness itself: ORT's outputs for three small torch
#                      models (depthwise + hardswish + SE conv net, a transformer
#                      encoder layer, int64/bool/int32 outputs) against torch's
#   ort.matches_baton  `baton plan` + `baton run` of the conv net and the
#                      transformer layer against ORT
#   ort.capped_copies  tools/ort/cap_isa.py (ORT with MLAS capped at AVX2 or
#                      SSE, the benchmark's peer in its avx2 and portable rows):
#                      the patch, the copy, and the copy's outputs against torch
#
#   ort.bench_docs     tools/bench_vs_torch.py --docs: the table replaces only
#                      what lies between docs/performance.md's marker lines
#                      (needs no ONNX Runtime)
#
# The others need onnxruntime-node from tools/ort/install.sh (tools/install_deps.sh
# runs it); without it they fail and say so. Together a few seconds.
set(_ort_test ${CMAKE_CURRENT_LIST_DIR}/ort_test.py)
add_test(NAME ort.matches_torch
  COMMAND ${BATON_PYTHON} ${_ort_test} torch --work ${CMAKE_BINARY_DIR}/ort_test/torch)
add_test(NAME ort.matches_baton
  COMMAND ${BATON_PYTHON} ${_ort_test} baton --tool $<TARGET_FILE:baton>
          --work ${CMAKE_BINARY_DIR}/ort_test/baton)
set_tests_properties(ort.matches_torch ort.matches_baton PROPERTIES TIMEOUT 120)
if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")  # the patch is x86-64 code
  add_test(NAME ort.capped_copies
    COMMAND ${BATON_PYTHON} ${_ort_test} caps --work ${CMAKE_BINARY_DIR}/ort_test/caps)
  set_tests_properties(ort.capped_copies PROPERTIES TIMEOUT 120)
endif()
add_test(NAME ort.bench_docs
  COMMAND ${BATON_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/bench_docs_test.py)
set_tests_properties(ort.bench_docs PROPERTIES TIMEOUT 60)
