# report.html is one self-contained file: its stylesheet, its script and the
# charting library (uPlot from the npm registry, fetched and integrity-checked
# by scripts/fetch-uplot.sh) are embedded into parity_report at build time as
# byte arrays in generated/report/report_assets.h. Nothing is fetched when a
# report is viewed.
set(PARITY_UPLOT_DIR "${PARITY_DEPS_DIR}/uplot" CACHE PATH
    "uPlot's dist files: uPlot.iife.min.js and uPlot.min.css (scripts/fetch-uplot.sh)")
if(NOT EXISTS "${PARITY_UPLOT_DIR}/uPlot.iife.min.js" OR NOT EXISTS "${PARITY_UPLOT_DIR}/uPlot.min.css")
  message(FATAL_ERROR "uPlot not found under PARITY_UPLOT_DIR=${PARITY_UPLOT_DIR}; "
                      "run scripts/install-deps.sh (or scripts/fetch-uplot.sh)")
endif()
set(parity_assets_dir "${CMAKE_SOURCE_DIR}/src/report/assets")
set(parity_assets
  "kReportHtml=${parity_assets_dir}/report.html"
  "kReportCss=${parity_assets_dir}/report.css"
  "kReportJs=${parity_assets_dir}/report.js"
  "kUplotJs=${PARITY_UPLOT_DIR}/uPlot.iife.min.js"
  "kUplotCss=${PARITY_UPLOT_DIR}/uPlot.min.css")
set(parity_asset_files)
foreach(a IN LISTS parity_assets)
  string(REGEX REPLACE "^[^=]*=" "" f "${a}")
  list(APPEND parity_asset_files "${f}")
endforeach()
# "|" separates the assets on the command line: a ";" would split the argument.
string(REPLACE ";" "|" parity_assets_arg "${parity_assets}")
set(parity_assets_header "${CMAKE_BINARY_DIR}/generated/report/report_assets.h")
add_custom_command(
  OUTPUT "${parity_assets_header}"
  COMMAND ${CMAKE_COMMAND} "-DOUT=${parity_assets_header}" "-DASSETS=${parity_assets_arg}"
          -P "${parity_assets_dir}/embed.cmake"
  DEPENDS ${parity_asset_files} "${parity_assets_dir}/embed.cmake"
  COMMENT "Embedding report.html assets and uPlot"
  VERBATIM)
target_sources(parity_report PRIVATE "${parity_assets_header}")
