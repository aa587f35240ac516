# Writes version.hpp from version.hpp.in with the checkout's current git revision (cmake -P, run at
# configure time and again by every build). configure_file rewrites the header only when its text
# changes, so after a commit just the few files that print the revision recompile, and a binary never
# reports the revision of an older configure.
# Inputs (-D): SOURCE_DIR (the checkout), PROJECT_VERSION, IN (template), OUT (header to write).
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE MOETWIN_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT MOETWIN_GIT_REVISION)
  set(MOETWIN_GIT_REVISION "unknown")
endif()
configure_file(${IN} ${OUT} @ONLY)
