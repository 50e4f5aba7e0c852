# planner.plans_unchanged: plans a fixed corpus (tools/plan_corpus.sh: every
# end-to-end graph, the ONNX import cases and five torchvision models, on every
# bundled target with seven rule sets) and compares the SHA-256 of every plan
# (or of the error message of a rejected one) with tests/golden/plan_sha256.txt,
# which the last change that meant to alter plan bytes wrote. A refactoring
# must leave it untouched; a change that alters plans regenerates it and says
# why in its commit.
add_test(NAME planner.plans_unchanged
  COMMAND ${CMAKE_COMMAND} -E env BATON_CORPUS_DIR=${CMAKE_BINARY_DIR}/plan_corpus
          bash -c "set -o pipefail; '${PROJECT_SOURCE_DIR}/tools/plan_corpus.sh' '$<TARGET_FILE:baton>' \"\$BATON_CORPUS_DIR\" > \"\$BATON_CORPUS_DIR.txt\" && diff -u '${PROJECT_SOURCE_DIR}/tests/golden/plan_sha256.txt' \"\$BATON_CORPUS_DIR.txt\"")
# COST makes a fresh ctest (no timing history) start this long serial test
# first, beside the short ones, instead of last on its own.
set_tests_properties(planner.plans_unchanged PROPERTIES TIMEOUT 1500 COST 1000)
