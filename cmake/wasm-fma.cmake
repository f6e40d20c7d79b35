# The relaxed-SIMD builds: the single-threaded and the threaded build again, compiled
# with -mrelaxed-simd, so that simd.h's wt_f32x4_fma is a fused multiply-add
# (f32x4.relaxed_madd): dist/webtrain-core-fma.wasm and dist/mt/webtrain-core-mt-fma.wasm, each
# beside the SIMD128 build's .wasm, loaded by that build's .mjs (and worker script): the same
# sources and link options give the same JavaScript glue but for the file names, which
# scripts/wasm-relaxed.mjs checks (--glue) on every build. js/core.js loads them where the
# engine validates a relaxed-SIMD probe.
#
# Emscripten 3.1.6's clang 14 emits the relaxed-SIMD prototype's f32x4.fma (0xfd 0xaf), which
# its binaryen 108 accepts and engines no longer do; the final opcode (0xfd 0x85 0x02, from
# clang >= 16) is what binaryen 108 rejects. So: compile and link with clang 14 + binaryen as the
# SIMD128 builds do, then scripts/wasm-relaxed.mjs rewrites each prototype instruction into
# the final one (decoding the code section; it also validates the result where Node runs relaxed
# SIMD, hence the flag), into dist/ through a temporary file and a rename.
find_program(WT_NODE node REQUIRED)
# Node 20 runs relaxed SIMD behind this flag; a Node that does not take it runs it as it is.
execute_process(COMMAND ${WT_NODE} --experimental-wasm-relaxed-simd -e 0 RESULT_VARIABLE wt_flag_refused OUTPUT_QUIET ERROR_QUIET)
if(wt_flag_refused)
  set(WT_RELAXED_REWRITE ${WT_NODE} "${CMAKE_SOURCE_DIR}/scripts/wasm-relaxed.mjs")
else()
  set(WT_RELAXED_REWRITE ${WT_NODE} --experimental-wasm-relaxed-simd "${CMAKE_SOURCE_DIR}/scripts/wasm-relaxed.mjs")
endif()

# A copy of `base` (a library or an executable of this file's caller) with -mrelaxed-simd.
function(wt_relaxed_copy name base kind)
  get_target_property(srcs ${base} SOURCES)
  get_target_property(opts ${base} COMPILE_OPTIONS)
  get_target_property(defs ${base} COMPILE_DEFINITIONS)
  get_target_property(incs ${base} INCLUDE_DIRECTORIES)
  get_target_property(libs ${base} LINK_LIBRARIES)
  if(kind STREQUAL "STATIC")
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${incs})
  else()
    add_executable(${name} ${srcs})
    get_target_property(lopts ${base} LINK_OPTIONS)
    target_link_options(${name} PRIVATE ${lopts} -mrelaxed-simd)
  endif()
  target_compile_options(${name} PRIVATE ${opts} -mrelaxed-simd)
  if(defs)
    target_compile_definitions(${name} PUBLIC ${defs})
  endif()
  target_compile_definitions(${name} PUBLIC $<TARGET_PROPERTY:webtrain_core,INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(${name} PUBLIC ${libs})
endfunction()

wt_relaxed_copy(webtrain_core_fma webtrain_core STATIC)
wt_relaxed_copy(webtrain_core_mt_fma webtrain_core_mt STATIC)
target_link_libraries(webtrain_core_fma PUBLIC wt_protobuf_c)
# (webtrain_core_mt's LINK_LIBRARIES already name wt_protobuf_c_mt.)

wt_relaxed_copy(webtrain-core-fma webtrain-core EXECUTABLE)
wt_relaxed_copy(webtrain-core-mt-fma webtrain-core-mt EXECUTABLE)
foreach(t webtrain-core webtrain-core-mt)
  get_target_property(libs ${t}-fma LINK_LIBRARIES)
  list(TRANSFORM libs REPLACE "^webtrain_core$" "webtrain_core_fma")
  list(TRANSFORM libs REPLACE "^webtrain_core_mt$" "webtrain_core_mt_fma")
  set_property(TARGET ${t}-fma PROPERTY LINK_LIBRARIES ${libs})
endforeach()
set_target_properties(webtrain-core-fma PROPERTIES
  SUFFIX ".mjs" RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out-fma"
  LINK_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt")
set_target_properties(webtrain-core-mt-fma PROPERTIES
  SUFFIX ".mjs" RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out-mt-fma"
  LINK_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt;${CMAKE_SOURCE_DIR}/cmake/wasm-mt-pre.js")

add_dependencies(webtrain-core-fma webtrain-core)
add_dependencies(webtrain-core-mt-fma webtrain-core-mt)
add_custom_command(TARGET webtrain-core-fma POST_BUILD
  COMMAND ${WT_RELAXED_REWRITE} "${CMAKE_BINARY_DIR}/out-fma/webtrain-core-fma.wasm" "${WT_DIST}/webtrain-core-fma.wasm"
          --glue "${CMAKE_BINARY_DIR}/out-fma/webtrain-core-fma.mjs" "${CMAKE_BINARY_DIR}/out/webtrain-core.mjs"
  VERBATIM)
add_custom_command(TARGET webtrain-core-mt-fma POST_BUILD
  COMMAND ${WT_RELAXED_REWRITE} "${CMAKE_BINARY_DIR}/out-mt-fma/webtrain-core-mt-fma.wasm" "${WT_DIST_MT}/webtrain-core-mt-fma.wasm"
          --glue "${CMAKE_BINARY_DIR}/out-mt-fma/webtrain-core-mt-fma.mjs" "${CMAKE_BINARY_DIR}/out-mt/webtrain-core-mt.mjs"
          --glue "${CMAKE_BINARY_DIR}/out-mt-fma/webtrain-core-mt-fma.worker.js" "${CMAKE_BINARY_DIR}/out-mt/webtrain-core-mt.worker.js"
  VERBATIM)
