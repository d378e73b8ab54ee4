# Imports ONNX Runtime from PARITY_ORT_ROOT (include/ + lib/, the layout of an
# official release tarball; scripts/fetch-ort.sh makes one in .deps/).
find_path(PARITY_ORT_INCLUDE onnxruntime_cxx_api.h
  PATHS ${PARITY_ORT_ROOT}/include ${PARITY_ORT_ROOT}/include/onnxruntime NO_DEFAULT_PATH)
find_library(PARITY_ORT_LIB onnxruntime PATHS ${PARITY_ORT_ROOT}/lib NO_DEFAULT_PATH)
if(NOT PARITY_ORT_INCLUDE OR NOT PARITY_ORT_LIB)
  message(FATAL_ERROR "ONNX Runtime not found under PARITY_ORT_ROOT=${PARITY_ORT_ROOT}; "
                      "run scripts/install-deps.sh or pass -DPARITY_ORT_ROOT=<dir with include/ and lib/>")
endif()
add_library(parity::onnxruntime SHARED IMPORTED)
set_target_properties(parity::onnxruntime PROPERTIES
  IMPORTED_LOCATION ${PARITY_ORT_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${PARITY_ORT_INCLUDE})
get_filename_component(PARITY_ORT_LIBDIR ${PARITY_ORT_LIB} DIRECTORY)
# The binaries find libonnxruntime where the build found it.
set(CMAKE_BUILD_RPATH ${PARITY_ORT_LIBDIR})
set(CMAKE_INSTALL_RPATH ${PARITY_ORT_LIBDIR})
message(STATUS "ONNX Runtime: ${PARITY_ORT_LIB}")
