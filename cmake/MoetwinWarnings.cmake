# Warnings for our own code; third-party headers come in as SYSTEM includes. Every build gets the same
# warning flags; they become errors only with MOETWIN_WERROR (on in CI: .ci/run, bootstrap.sh test), so a
# user's build with another compiler or optimisation level is never stopped by a new warning.
option(MOETWIN_WERROR "Treat compiler warnings in moetwin's own code as errors (CI turns this on)" OFF)
add_library(moetwin_warnings INTERFACE)
target_compile_options(moetwin_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Wimplicit-fallthrough>)
if(MOETWIN_WERROR)
  target_compile_options(moetwin_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

if(MOETWIN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
