# Native tree: C unit tests, ONNX node tests (one ctest per allowlisted case), CLI.
enable_testing()

add_library(wt_test_support STATIC tests/c/op_harness.c tests/c/gradcheck.c)
target_link_libraries(wt_test_support PUBLIC webtrain_core)
target_include_directories(wt_test_support PUBLIC tests/c)

file(GLOB WT_UNIT_TESTS CONFIGURE_DEPENDS tests/c/test_*.c)
foreach(src ${WT_UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE ${WT_WARNINGS})
  target_link_libraries(${name} PRIVATE wt_test_support)
  target_compile_definitions(${name} PRIVATE WT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME unit/${name} COMMAND ${name})
endforeach()

if(EXISTS "${CMAKE_SOURCE_DIR}/tests/onnx/case_runner.c")
  add_executable(wt_onnx_case tests/onnx/case_runner.c)
  target_compile_options(wt_onnx_case PRIVATE ${WT_WARNINGS})
  target_link_libraries(wt_onnx_case PRIVATE webtrain_core)
  include(cmake/onnx_tests.cmake)
endif()
