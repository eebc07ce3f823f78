# What an install holds, in the layout ShareDirs::locate() expects (the FHS layout ninja-, cmake-
# and clang-format wheels use too):
#   <prefix>/bin/triton-portcheck
#   <prefix>/share/triton-portcheck/{python/portcheck_worker, data, demo}
# A wheel built by scikit-build-core maps <prefix>/bin to the environment's scripts folder (on PATH
# once the venv is active, and callable as .venv/bin/triton-portcheck without it) and <prefix>/share
# to the environment's data folder, so `pip install` gives the same layout as `cmake --install`.
include(GNUInstallDirs)
if(SKBUILD)
  set(portcheck_bin_dir "${SKBUILD_SCRIPTS_DIR}")
  set(portcheck_share_dir "${SKBUILD_DATA_DIR}/share/triton-portcheck")
else()
  set(portcheck_bin_dir "${CMAKE_INSTALL_BINDIR}")
  set(portcheck_share_dir "${CMAKE_INSTALL_DATADIR}/triton-portcheck")
endif()

install(TARGETS triton-portcheck RUNTIME DESTINATION "${portcheck_bin_dir}")
install(DIRECTORY python/portcheck_worker DESTINATION "${portcheck_share_dir}/python"
        FILES_MATCHING PATTERN "*.py" PATTERN "protocol.schema.json" PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY data/ DESTINATION "${portcheck_share_dir}/data" FILES_MATCHING PATTERN "*.toml")
install(DIRECTORY demo/ DESTINATION "${portcheck_share_dir}/demo"
        FILES_MATCHING PATTERN "*.py" PATTERN "*.toml" PATTERN "__pycache__" EXCLUDE)
# The pre-commit hook's entry point (.pre-commit-hooks.yaml), next to the binary it runs.
install(PROGRAMS scripts/pre-commit-hook DESTINATION "${portcheck_bin_dir}"
        RENAME triton-portcheck-pre-commit)
