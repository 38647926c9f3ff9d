# Optional dependencies. Each FUSEBOX_WITH_* option defaults to ON when its
# dependency is found, and the configure log says clearly what is missing.

# A dependency switched off on the command line is not even looked for (a partial install of it,
# such as clang's CMake files without LLVM's, must not break the configure).
if(NOT DEFINED FUSEBOX_WITH_GUI OR FUSEBOX_WITH_GUI)
  find_package(Qt6 QUIET COMPONENTS Widgets Svg Charts)
endif()
if(NOT DEFINED FUSEBOX_WITH_LLVM OR FUSEBOX_WITH_LLVM)
  find_package(LLVM 16 QUIET CONFIG)
  if(LLVM_FOUND)
    find_package(Clang QUIET CONFIG HINTS "${LLVM_DIR}/../clang" /usr/lib/llvm-16/lib/cmake/clang)
  endif()
endif()
if(NOT DEFINED FUSEBOX_WITH_OPENBLAS OR FUSEBOX_WITH_OPENBLAS)
  find_library(OPENBLAS_LIBRARY NAMES openblas)
  find_path(OPENBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas)
endif()

if(NOT DEFINED FUSEBOX_WITH_SESSIONS OR FUSEBOX_WITH_SESSIONS)
  find_package(SQLite3 QUIET)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(GRAPHVIZ QUIET IMPORTED_TARGET libgvc libcgraph)
  endif()
endif()

set(_gui_default OFF)
if(Qt6_FOUND)
  set(_gui_default ON)
endif()
set(_llvm_default OFF)
if(LLVM_FOUND AND Clang_FOUND)
  set(_llvm_default ON)
endif()
# The CUDA backend needs nothing at build time: NVRTC, the driver and cuBLAS are opened at run time.
set(_cuda_default ON)

option(FUSEBOX_WITH_GUI "Build the Qt 6 inspector GUI" ${_gui_default})
option(FUSEBOX_WITH_LLVM "Build the CPU backend (clang + LLVM ORC JIT)" ${_llvm_default})
option(FUSEBOX_WITH_CUDA "Build the CUDA backend (NVRTC, driver API and cuBLAS opened at run time)" ${_cuda_default})
set(_blas_default OFF)
if(OPENBLAS_LIBRARY AND OPENBLAS_INCLUDE_DIR)
  set(_blas_default ON)
endif()
option(FUSEBOX_WITH_OPENBLAS "CPU matmul extern through OpenBLAS (otherwise Fusebox's own blocked kernel)" ${_blas_default})

function(fusebox_report_dependency option found what install_hint)
  if(${option})
    message(STATUS "Fusebox: ${option}=ON (${what} found)")
  elseif(found)
    message(STATUS "Fusebox: ${option}=OFF (switched off by the user)")
  else()
    message(STATUS "Fusebox: ${option}=OFF: ${what} not found; install ${install_hint} or run scripts/setup")
  endif()
endfunction()

fusebox_report_dependency(FUSEBOX_WITH_GUI "${Qt6_FOUND}" "Qt 6 Widgets/Svg/Charts"
  "qt6-base-dev qt6-svg-dev qt6-charts-dev")
fusebox_report_dependency(FUSEBOX_WITH_LLVM "${_llvm_default}" "LLVM 16 and libclang-cpp 16"
  "llvm-16-dev libclang-cpp16-dev libclang-16-dev")
fusebox_report_dependency(FUSEBOX_WITH_CUDA ON "nothing at build time; NVRTC and the driver load at run time"
  "the CUDA Toolkit at /usr/local/cuda")

set(_sessions_default OFF)
if(SQLite3_FOUND AND GRAPHVIZ_FOUND)
  set(_sessions_default ON)
endif()
option(FUSEBOX_WITH_SESSIONS "SQLite sessions and HTML reports (Graphviz layout)" ${_sessions_default})
fusebox_report_dependency(FUSEBOX_WITH_SESSIONS "${_sessions_default}" "SQLite 3 and Graphviz (gvc, cgraph)"
  "libsqlite3-dev libgraphviz-dev")
if(FUSEBOX_WITH_SESSIONS AND NOT _sessions_default)
  message(FATAL_ERROR "FUSEBOX_WITH_SESSIONS=ON but SQLite 3 or Graphviz was not found")
endif()
if(FUSEBOX_WITH_GUI AND NOT FUSEBOX_WITH_SESSIONS)
  message(FATAL_ERROR "the GUI needs FUSEBOX_WITH_SESSIONS (SQLite 3 and Graphviz)")
endif()

fusebox_report_dependency(FUSEBOX_WITH_OPENBLAS "${_blas_default}" "OpenBLAS" "libopenblas-dev")

if(FUSEBOX_WITH_GUI AND NOT Qt6_FOUND)
  message(FATAL_ERROR "FUSEBOX_WITH_GUI=ON but Qt 6 was not found")
endif()
if(FUSEBOX_WITH_LLVM AND NOT _llvm_default)
  message(FATAL_ERROR "FUSEBOX_WITH_LLVM=ON but LLVM 16 / Clang 16 CMake packages were not found")
endif()
