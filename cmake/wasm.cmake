# WebAssembly tree: an ES module (dist/webtrain-core.mjs) with the .wasm beside it, loadable
# in Node 20 (ESM; js/core.js hands it the .wasm bytes) and in browsers (fetched next to the
# module via import.meta.url). Built for web/worker only: 3.1.6's Node branch breaks under
# Node 20 ESM (docs/contributing.md, Toolchain), and Node never needs it since js/ passes wasmBinary.
target_compile_options(webtrain_core PRIVATE -O3 -msimd128)
target_compile_options(wt_protobuf_c PRIVATE -O3 -msimd128)

file(STRINGS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt" WT_EXPORTS)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt")
list(APPEND WT_EXPORTS _malloc _free)
list(JOIN WT_EXPORTS "," WT_EXPORTS_CSV)

add_executable(webtrain-core src/wasm/api.c src/wasm/api_train.c src/wasm/api_inspect.c src/wasm/api_ckpt.c src/wasm/api_external.c src/wasm/api_lora.c src/wasm/api_record.c src/wasm/api_gpu.c)
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
  # what the model uses (tests/js/heap.test.mjs bounds it). 3.1.6's default overgrows by 20%.
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

# ---- the threaded build: dist/mt/webtrain-core-mt.{mjs,wasm} + webtrain-core-mt.worker.js ----
# The same sources compiled again with -pthread (shared memory needs atomics + bulk-memory in
# every object), linked with a pthread pool created at load (PTHREAD_POOL_SIZE: Module.wtPool,
# started before main() and reused; no thread is created inside a step). ENVIRONMENT adds node:
# in Node the pool is worker_threads. The worker file Emscripten 3.1.6 writes is a classic
# script (CommonJS in Node), so the threaded files live in dist/mt/ with a package.json saying
# "type": "commonjs" (the package root is "type": "module"). js/core.js chooses between the two
# builds at load time.
get_target_property(WT_CORE_SRCS webtrain_core SOURCES)
get_target_property(WT_PB_SRCS wt_protobuf_c SOURCES)
add_library(wt_protobuf_c_mt STATIC ${WT_PB_SRCS})
target_include_directories(wt_protobuf_c_mt PUBLIC "${WT_PROTOBUF_C_DIR}/include" "${WT_GEN_DIR}")
target_include_directories(wt_protobuf_c_mt PRIVATE "${WT_PROTOBUF_C_DIR}/include/protobuf-c")
target_compile_options(wt_protobuf_c_mt PRIVATE -w -O3 -msimd128 -pthread)
add_library(webtrain_core_mt STATIC ${WT_CORE_SRCS})
target_include_directories(webtrain_core_mt PUBLIC src include)
target_compile_options(webtrain_core_mt PRIVATE ${WT_WARNINGS} -O3 -msimd128 -pthread)
target_compile_definitions(webtrain_core_mt PUBLIC $<TARGET_PROPERTY:webtrain_core,INTERFACE_COMPILE_DEFINITIONS>)
target_link_libraries(webtrain_core_mt PUBLIC wt_protobuf_c_mt)

add_executable(webtrain-core-mt src/wasm/api.c src/wasm/api_train.c src/wasm/api_inspect.c src/wasm/api_ckpt.c src/wasm/api_external.c src/wasm/api_lora.c src/wasm/api_record.c src/wasm/api_gpu.c)
target_compile_options(webtrain-core-mt PRIVATE -O3 -msimd128 -pthread ${WT_WARNINGS})
target_link_libraries(webtrain-core-mt PRIVATE webtrain_core_mt)
set_target_properties(webtrain-core-mt PROPERTIES
  SUFFIX ".mjs"
  RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out-mt"
  LINK_DEPENDS "${CMAKE_SOURCE_DIR}/src/wasm/exports.txt;${CMAKE_SOURCE_DIR}/cmake/wasm-mt-pre.js")
target_link_options(webtrain-core-mt PRIVATE
  -O3 -msimd128 -pthread -sPTHREAD_POOL_SIZE=Module.wtPool
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createWebtrainCore
  -sENVIRONMENT=web,worker,node -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1048576 -sMAXIMUM_MEMORY=4294967296
  -sMEMORY_GROWTH_GEOMETRIC_STEP=0.1 -sMEMORY_GROWTH_GEOMETRIC_CAP=1048576
  # Each pthread's stack is malloc'd when it starts: 256 KiB like the main thread's (3.1.6's
  # default is 2 MiB), so a pool of 8 adds 2 MiB to the heap, not 16.
  -sTOTAL_STACK=262144 -sDEFAULT_PTHREAD_STACK_SIZE=262144
  -sEXPORTED_FUNCTIONS=${WT_EXPORTS_CSV}
  "-sEXPORTED_RUNTIME_METHODS=[UTF8ToString,HEAPU8]"
  -sFILESYSTEM=0 -sASSERTIONS=0
  "--pre-js=${CMAKE_SOURCE_DIR}/cmake/wasm-mt-pre.js"
  -Wno-pthreads-mem-growth)

set(WT_DIST_MT "${WT_DIST}/mt")
add_custom_command(TARGET webtrain-core-mt POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E make_directory "${WT_DIST_MT}"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_SOURCE_DIR}/cmake/wasm-mt-package.json" "${WT_DIST_MT}/package.json"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_BINARY_DIR}/out-mt/webtrain-core-mt.wasm" "${WT_DIST_MT}/.webtrain-core-mt.wasm.tmp"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_BINARY_DIR}/out-mt/webtrain-core-mt.worker.js" "${WT_DIST_MT}/.webtrain-core-mt.worker.js.tmp"
  COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_BINARY_DIR}/out-mt/webtrain-core-mt.mjs" "${WT_DIST_MT}/.webtrain-core-mt.mjs.tmp"
  COMMAND ${CMAKE_COMMAND} -E rename "${WT_DIST_MT}/.webtrain-core-mt.wasm.tmp" "${WT_DIST_MT}/webtrain-core-mt.wasm"
  COMMAND ${CMAKE_COMMAND} -E rename "${WT_DIST_MT}/.webtrain-core-mt.worker.js.tmp" "${WT_DIST_MT}/webtrain-core-mt.worker.js"
  COMMAND ${CMAKE_COMMAND} -E rename "${WT_DIST_MT}/.webtrain-core-mt.mjs.tmp" "${WT_DIST_MT}/webtrain-core-mt.mjs"
  VERBATIM)
include(cmake/wasm-fma.cmake)
