# Native tree: C unit tests, ONNX node tests (one ctest per allowlisted case), CLI.
enable_testing()

add_library(wt_test_support STATIC tests/c/op_harness.c tests/c/gradcheck.c tests/c/bad_input_harness.c)
target_link_libraries(wt_test_support PUBLIC webtrain_core)
target_include_directories(wt_test_support PUBLIC tests/c)
# Tests build graphs by hand and let a failed call show in the checks that follow; the library
# itself may not drop a status (WT_NODISCARD in src/base/status.h).
set(WT_TEST_WARNINGS ${WT_WARNINGS} -Wno-unused-result)
target_compile_options(wt_test_support PRIVATE ${WT_TEST_WARNINGS})

file(GLOB WT_UNIT_TESTS CONFIGURE_DEPENDS tests/c/test_*.c)
foreach(src ${WT_UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE ${WT_TEST_WARNINGS})
  target_link_libraries(${name} PRIVATE wt_test_support)
  target_compile_definitions(${name} PRIVATE WT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(NOT name STREQUAL "test_grad_coverage")
    add_test(NAME unit/${name} COMMAND ${name})
  endif()
  # test_threads_golden also asserts that no training step allocates, counting malloc and its
  # kin (tests/c/alloc_count.c) in this tree; the sanitizer trees keep their own allocators.
  if(name STREQUAL "test_threads_golden" AND NOT WT_SANITIZE AND NOT WT_TSAN)
    target_sources(${name} PRIVATE tests/c/alloc_count.c)
    target_compile_definitions(${name} PRIVATE WT_COUNT_ALLOCS)
  endif()
  if(name MATCHES "^test_grad_" AND NOT name STREQUAL "test_grad_coverage")
    list(APPEND WT_GRAD_TEST_BINARIES "$<TARGET_FILE:${name}>")
    # One ctest per differentiated op (grad/Conv ...), discovered from the binary at test time.
    string(REPLACE "test_grad_" "" family "${name}")
    set(script "${CMAKE_BINARY_DIR}/${name}_ops.cmake")
    file(WRITE "${script}.in"
      "execute_process(COMMAND \"${CMAKE_COMMAND}\" -E env WT_GRADCHECK_MODE=list \"$<TARGET_FILE:${name}>\"\n"
      "  OUTPUT_VARIABLE out ERROR_QUIET)\n"
      "string(REGEX MATCHALL \"gradcheck-op: [A-Za-z0-9_]+\" lines \"\${out}\")\n"
      "list(REMOVE_DUPLICATES lines)\n"
      "foreach(line IN LISTS lines)\n"
      "  string(REPLACE \"gradcheck-op: \" \"\" op \"\${line}\")\n"
      "  add_test(grad/${family}/\${op} \"$<TARGET_FILE:${name}>\")\n"
      "  set_tests_properties(grad/${family}/\${op} PROPERTIES ENVIRONMENT WT_GRADCHECK_OP=\${op})\n"
      "endforeach()\n")
    file(GENERATE OUTPUT "${script}" INPUT "${script}.in")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
  endif()
endforeach()
# Every op with a gradient rule has a finite-difference check that the gradient tests run:
# the coverage test reads their case lists (WT_GRADCHECK_MODE=list).
add_test(NAME unit/test_grad_coverage COMMAND test_grad_coverage ${WT_GRAD_TEST_BINARIES})

# The relaxed-SIMD build's 6-row GEMM tile (src/backend/cpu/gemm_tile.h MR_WIDE) is compiled only
# there; these build the GEMM again with it, so that its bits (against the 4-row tile) and its
# results (against the reference) are tested natively as well. The kernel objects in the
# executable stand in for the library's (no other part of it is pulled in for them).
set(WT_GEMM_SOURCES src/backend/cpu/gemm.c src/backend/cpu/gemm_small.c src/backend/cpu/gemm_buffers.c
                    src/backend/cpu/gemm_ref.c)
foreach(name test_gemm_tiles test_gemm)
  add_executable(${name}_wide tests/c/${name}.c ${WT_GEMM_SOURCES})
  target_compile_options(${name}_wide PRIVATE ${WT_TEST_WARNINGS})
  target_compile_definitions(${name}_wide PRIVATE WT_GEMM_MR_WIDE=6)
  target_link_libraries(${name}_wide PRIVATE wt_test_support)
  add_test(NAME unit/${name}_wide COMMAND ${name}_wide)
endforeach()

if(EXISTS "${CMAKE_SOURCE_DIR}/tests/onnx/case_runner.c")
  add_executable(wt_onnx_case tests/onnx/case_runner.c)
  target_compile_options(wt_onnx_case PRIVATE ${WT_WARNINGS})
  target_link_libraries(wt_onnx_case PRIVATE webtrain_core)
  include(cmake/onnx_tests.cmake)
endif()

# Benchmarks (not tests): the native training step at several thread counts.
add_executable(wt_step_bench tests/bench/step_bench.c)
target_compile_options(wt_step_bench PRIVATE ${WT_WARNINGS})
target_link_libraries(wt_step_bench PRIVATE webtrain_core)

# tests/bench/big-checkpoint.mjs: a checkpoint with external data of any size, written natively.
add_executable(wt_big_checkpoint tests/bench/big_checkpoint.c)
target_compile_options(wt_big_checkpoint PRIVATE ${WT_WARNINGS})
target_link_libraries(wt_big_checkpoint PRIVATE webtrain_core)
