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
# What it links (parity_core, parity_compare, parity_report) is position-independent
# in every build (CMakeLists.txt), so PARITY_PREBUILT_DIR's libraries link here too.
set_target_properties(_core PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS _core LIBRARY DESTINATION parity)
if(parity_prebuilt)
  # make's build/parity, installed as CMake installs the one built here: its
  # RUNPATH (the build's ORT folder) becomes $ORIGIN, and it is stripped with
  # the rest (scikit-build-core's install.strip).
  set(parity_installed "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/parity/parity")
  install(PROGRAMS "${PARITY_PREBUILT_DIR}/parity" DESTINATION parity)
  install(CODE "
    file(RPATH_SET FILE \"${parity_installed}\" NEW_RPATH \"\\$ORIGIN\")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" \"${parity_installed}\" COMMAND_ERROR_IS_FATAL ANY)
    endif()")
else()
  set_target_properties(parity PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS parity RUNTIME DESTINATION parity)
endif()
# The pinned ORT the build linked against, under its soname (libonnxruntime.so.1).
file(REAL_PATH "${PARITY_ORT_LIB}" parity_ort_real)
install(FILES "${parity_ort_real}" DESTINATION parity RENAME libonnxruntime.so.1)
if(EXISTS "${PARITY_ORT_LIBDIR}/libonnxruntime_providers_shared.so")
  install(FILES "${PARITY_ORT_LIBDIR}/libonnxruntime_providers_shared.so" DESTINATION parity)
endif()
