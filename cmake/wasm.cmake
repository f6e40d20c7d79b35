# WebAssembly tree: an ES module (dist/webtrain-core.mjs) with the .wasm beside it, loadable
# in Node 20 (ESM; js/core.js hands it the .wasm bytes) and in browsers (fetched next to the
# module via import.meta.url). Built for web/worker only: 3.1.6's Node branch breaks under
# Node 20 ESM (TOOLCHAIN.md), and Node never needs it since js/ passes wasmBinary.
target_compile_options(webtrain_core PRIVATE -O3 -msimd128)
target_compile_options(wt_protobuf_c PRIVATE -O3 -msimd128)

file(STRINGS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt" WT_EXPORTS)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt")
list(APPEND WT_EXPORTS _malloc _free)
list(JOIN WT_EXPORTS "," WT_EXPORTS_CSV)

add_executable(webtrain-core src/wasm/api.c src/wasm/api_train.c src/wasm/api_inspect.c)
target_compile_options(webtrain-core PRIVATE -O3 -msimd128 ${WT_WARNINGS})
target_link_libraries(webtrain-core PRIVATE webtrain_core)
set_target_properties(webtrain-core PROPERTIES
  SUFFIX ".mjs"
  RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out"
  LINK_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt")
target_link_options(webtrain-core PRIVATE
  -O3 -msimd128
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createWebtrainCore
  -sENVIRONMENT=web,worker
  # The Memory starts just above static data (GEMM packing buffers, op tables) + the stack and
  # grows with malloc: by what is asked plus at most 10% (capped at 1 MB), so its size tracks
  # what the model uses (issue 6: peak heap). 3.1.6's default overgrows by 20%.
  # Stack: the whole test suite (ONNX node tests, goldens, JS tests) runs in 64 KiB with
  # -sSTACK_OVERFLOW_CHECK=2; 256 KiB leaves 4x that (frames are small, recursion is bounded:
  # protobuf nesting 64, constant folding depth 16).
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1048576 -sMAXIMUM_MEMORY=4294967296
  -sMEMORY_GROWTH_GEOMETRIC_STEP=0.1 -sMEMORY_GROWTH_GEOMETRIC_CAP=1048576
  -sTOTAL_STACK=262144
  -sEXPORTED_FUNCTIONS=${WT_EXPORTS_CSV}
  "-sEXPORTED_RUNTIME_METHODS=[UTF8ToString,HEAPU8]"
  -sFILESYSTEM=0 -sASSERTIONS=0 -sDYNAMIC_EXECUTION=0)

# Publish into dist/ by copy + rename, .wasm and .mjs back to back, so a reader never sees a
# half-written file or (but for an instant) a .wasm from one build with the .mjs of another.
# WT_DIST can point elsewhere for a private build (e.g. -DWT_DIST=build/x/dist, with js/ copied beside it).
set(WT_DIST "${CMAKE_SOURCE_DIR}/dist" CACHE PATH "where the wasm build publishes webtrain-core.{mjs,wasm}")
add_custom_command(TARGET webtrain-core POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E make_directory "${WT_DIST}"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_BINARY_DIR}/out/webtrain-core.wasm" "${WT_DIST}/.webtrain-core.wasm.tmp"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_BINARY_DIR}/out/webtrain-core.mjs" "${WT_DIST}/.webtrain-core.mjs.tmp"
  COMMAND ${CMAKE_COMMAND} -E rename "${WT_DIST}/.webtrain-core.wasm.tmp" "${WT_DIST}/webtrain-core.wasm"
  COMMAND ${CMAKE_COMMAND} -E rename "${WT_DIST}/.webtrain-core.mjs.tmp" "${WT_DIST}/webtrain-core.mjs"
  VERBATIM)
