# int8 QDQ models (issue 15): Baton against ONNX Runtime and torch, in output
# LSBs. Included by tests/CMakeLists.txt (its glob of */tests.cmake).
#
#   quant.make_models       tests/quant/make_quant_models.py writes the cases
#                           (torch-quantized mobilenet_v2, resnet18, four
#                           MLPerf-Tiny nets, small onnx.helper QDQ graphs) with
#                           ORT's outputs at optimization levels 'all' and
#                           'disabled' and torch's; skipped when they are current.
#                           About 30 s on 2 busy cores.
#   quant.models_match_ort  tools/quant_check.py: `baton plan` (cpu target) and
#                           `baton run` of every case, within 1 LSB and 99% equal
#                           elements of ORT-all (the fused integer kernels;
#                           measured: all 18 exact, pool and product ties
#                           included, the dynamically quantized MLP and the
#                           ConvInteger).
#
# Both need onnxruntime-node from tools/ort/install.sh, as tests/ort does.
set(_quant_cases ${CMAKE_BINARY_DIR}/quant_models)
add_test(NAME quant.make_models
  COMMAND ${BATON_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/make_quant_models.py ${_quant_cases})
set_tests_properties(quant.make_models PROPERTIES
  FIXTURES_SETUP quant_models TIMEOUT 600 COST 60)
add_test(NAME quant.models_match_ort
  COMMAND ${BATON_PYTHON} ${PROJECT_SOURCE_DIR}/tools/quant_check.py
          --baton $<TARGET_FILE:baton> --cases ${_quant_cases}
          --work ${CMAKE_BINARY_DIR}/quant_check)
set_tests_properties(quant.models_match_ort PROPERTIES
  FIXTURES_REQUIRED quant_models TIMEOUT 600 COST 30)
