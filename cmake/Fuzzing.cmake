# The libFuzzer targets in fuzz/ need clang; the main build may be gcc. When clang++-16 and its
# libFuzzer runtime (libclang-rt-16-dev) are installed, a sub-build in build/fuzz configures this
# same source tree with FUSEBOX_FUZZ_TARGETS=ON (core only, instrumented) and ctest runs each
# target for a bounded time.
find_program(FUSEBOX_CLANGXX clang++-16)
find_program(FUSEBOX_CLANG clang-16)
find_file(FUSEBOX_LIBFUZZER libclang_rt.fuzzer-x86_64.a PATHS /usr/lib/llvm-16/lib/clang/16/lib/linux NO_DEFAULT_PATH)
set(FUSEBOX_FUZZ_SECONDS 30 CACHE STRING "How long ctest runs each fuzz target")
if(FUSEBOX_CLANGXX AND FUSEBOX_CLANG AND FUSEBOX_LIBFUZZER)
  message(STATUS "Fusebox: fuzz targets ON (clang-16 + libFuzzer), ${FUSEBOX_FUZZ_SECONDS} s each in ctest")
  include(ExternalProject)
  set(_fuzz_dir ${CMAKE_BINARY_DIR}/fuzz)
  ExternalProject_Add(fusebox_fuzz_targets
    SOURCE_DIR ${CMAKE_SOURCE_DIR}
    BINARY_DIR ${_fuzz_dir}
    CMAKE_ARGS -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=${FUSEBOX_CLANGXX} -DCMAKE_C_COMPILER=${FUSEBOX_CLANG}
               -DFUSEBOX_FUZZ_TARGETS=ON -DBUILD_TESTING=OFF -DFUSEBOX_WITH_SESSIONS=${FUSEBOX_WITH_SESSIONS}
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${_fuzz_dir} --parallel 2 --target fuzz_onnx_loader fuzz_fbx_parser fuzz_compiler
                  $<$<BOOL:${FUSEBOX_WITH_SESSIONS}>:fuzz_session_report>
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    USES_TERMINAL_BUILD ON)
  set(FUSEBOX_FUZZ_BIN ${_fuzz_dir}/fuzz)
else()
  message(STATUS "Fusebox: fuzz targets OFF (need clang-16, and libclang-rt-16-dev)")
endif()
