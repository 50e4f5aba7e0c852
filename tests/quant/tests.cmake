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
#                           `baton run` of every case but resnet8_cifar, within
#                           1 LSB and 99% equal elements of ORT-all (the fused
#                           integer kernels; measured: all exact, mobilenet_v2 and
#                           resnet18 included).
#   quant.resnet8_within_spread  resnet8_cifar, whose AveragePool Baton runs in
#                           float between DequantizeLinear and QuantizeLinear
#                           (ORT: an integer QLinearAveragePool): 1 LSB on 3 of 10
#                           logits, allowed up to the references' own spread.
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
          --work ${CMAKE_BINARY_DIR}/quant_check
          --case mobilenet_v2 --case resnet18 --case ds_cnn_kws --case mobilenet_v1_025_vww --case fc_autoencoder --case conv_per_channel_uint8 --case dwconv_per_channel_int8 --case matmul_int8_act --case add_broadcast_uint8 --case quantize_no_zero_point --case qdq_per_axis)
add_test(NAME quant.resnet8_within_spread
  COMMAND ${BATON_PYTHON} ${PROJECT_SOURCE_DIR}/tools/quant_check.py
          --baton $<TARGET_FILE:baton> --cases ${_quant_cases} --allow-spread
          --work ${CMAKE_BINARY_DIR}/quant_check_spread --case resnet8_cifar)
set_tests_properties(quant.models_match_ort quant.resnet8_within_spread PROPERTIES
  FIXTURES_REQUIRED quant_models TIMEOUT 600 COST 30)
