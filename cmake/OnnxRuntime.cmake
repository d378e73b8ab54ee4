# Imports ONNX Runtime from PARITY_ORT_ROOT (include/ + lib/, the layout of an
# official release tarball; scripts/fetch-ort.sh makes one in .deps/).
find_path(PARITY_ORT_INCLUDE onnxruntime_cxx_api.h
  PATHS ${PARITY_ORT_ROOT}/include ${PARITY_ORT_ROOT}/include/onnxruntime NO_DEFAULT_PATH)
find_library(PARITY_ORT_LIB onnxruntime PATHS ${PARITY_ORT_ROOT}/lib NO_DEFAULT_PATH)
if(NOT PARITY_ORT_INCLUDE OR NOT PARITY_ORT_LIB)
  message(FATAL_ERROR "ONNX Runtime not found under PARITY_ORT_ROOT=${PARITY_ORT_ROOT}; "
                      "run scripts/install-deps.sh or pass -DPARITY_ORT_ROOT=<dir with include/ and lib/>")
endif()
# Headers only: parity links no libonnxruntime but loads one at run time
# (src/ort/ort_library.h: --ort-library, PARITY_ORT_LIBRARY, else the bundled
# one), so two ORTs never meet in one process. The C++ wrapper is initialised
# by hand (Ort::InitApi) in every file that includes it.
add_library(parity::onnxruntime INTERFACE IMPORTED)
set_target_properties(parity::onnxruntime PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${PARITY_ORT_INCLUDE}
  INTERFACE_COMPILE_DEFINITIONS ORT_API_MANUAL_INIT
  INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
get_filename_component(PARITY_ORT_LIBDIR ${PARITY_ORT_LIB} DIRECTORY)
# The binaries find the bundled libonnxruntime.so.1 (dlopen by soname) where
# the build found it.
set(CMAKE_BUILD_RPATH ${PARITY_ORT_LIBDIR})
set(CMAKE_INSTALL_RPATH ${PARITY_ORT_LIBDIR})
message(STATUS "ONNX Runtime: ${PARITY_ORT_LIB}")
