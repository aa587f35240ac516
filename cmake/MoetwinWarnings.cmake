# Warnings are errors for our own code; third-party headers come in as SYSTEM includes.
add_library(moetwin_warnings INTERFACE)
target_compile_options(moetwin_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Wimplicit-fallthrough -Werror>)

if(MOETWIN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
