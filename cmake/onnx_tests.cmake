# ONNX backend node tests: one ctest per allowlisted case (ctest -R onnx/test_conv runs a family).
# The cases are generated at test time from Debian's python3-onnx by tests/onnx/generate.py
# (a ctest fixture), so the repository holds only the list.
find_program(WT_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(WT_ALLOWLIST "${CMAKE_SOURCE_DIR}/tests/onnx/allowlist.txt")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${WT_ALLOWLIST}")

add_test(NAME onnx/generate
         COMMAND ${WT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/onnx/generate.py ${WT_ONNX_TESTS_DIR})
set_tests_properties(onnx/generate PROPERTIES FIXTURES_SETUP onnx_cases)

file(STRINGS "${WT_ALLOWLIST}" WT_ALLOW_LINES)
foreach(line IN LISTS WT_ALLOW_LINES)
  string(REGEX REPLACE "#.*$" "" line "${line}")
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  separate_arguments(parts UNIX_COMMAND "${line}")
  list(POP_FRONT parts case)
  set(tol_args "")
  foreach(p IN LISTS parts)
    if(p MATCHES "^(rtol|atol)=(.+)$")
      list(APPEND tol_args "--${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  add_test(NAME onnx/${case} COMMAND wt_onnx_case ${tol_args} ${WT_ONNX_TESTS_DIR}/${case})
  set_tests_properties(onnx/${case} PROPERTIES FIXTURES_REQUIRED onnx_cases)
endforeach()
