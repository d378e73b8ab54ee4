# The Python package (pyproject.toml; scikit-build-core runs this build with
# PARITY_BUILD_PYTHON=ON): the nanobind extension parity._core, the parity
# binary and ONNX Runtime, all installed into the package folder `parity/`
# with an $ORIGIN rpath, so they load without LD_LIBRARY_PATH.
find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT RESULT_VARIABLE nanobind_rc)
if(NOT nanobind_rc EQUAL 0)
  message(FATAL_ERROR "nanobind not found for ${Python_EXECUTABLE}: pip install nanobind (pyproject.toml pins it)")
endif()
find_package(nanobind CONFIG REQUIRED)

# The comparison kernel only: compare needs no ONNX Runtime in-process.
nanobind_add_module(_core NB_STATIC src/python/module.cc)
target_link_libraries(_core PRIVATE parity_report)
# Only what the extension links is built position-independent: the rest (the
# parity binary's engine) compiles exactly as in the plain build.
set_target_properties(parity_core parity_compare parity_report PROPERTIES POSITION_INDEPENDENT_CODE ON)

set_target_properties(_core parity PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS _core LIBRARY DESTINATION parity)
install(TARGETS parity RUNTIME DESTINATION parity)
# The pinned ORT the build linked against, under its soname (libonnxruntime.so.1).
file(REAL_PATH "${PARITY_ORT_LIB}" parity_ort_real)
install(FILES "${parity_ort_real}" DESTINATION parity RENAME libonnxruntime.so.1)
if(EXISTS "${PARITY_ORT_LIBDIR}/libonnxruntime_providers_shared.so")
  install(FILES "${PARITY_ORT_LIBDIR}/libonnxruntime_providers_shared.so" DESTINATION parity)
endif()
