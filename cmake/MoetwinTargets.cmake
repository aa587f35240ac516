# moetwin_add_library(NAME SOURCES ... DEPENDS ...): one library per module folder, public headers in
# <folder>/include/moetwin/<name>/, alias moetwin::<name>. DEPENDS is the declared one-way dependency list.
function(moetwin_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  add_library(moetwin_${name} STATIC ${ARG_SOURCES})
  add_library(moetwin::${name} ALIAS moetwin_${name})
  target_include_directories(moetwin_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(moetwin_${name} PUBLIC ${ARG_DEPENDS} PRIVATE moetwin_warnings ${ARG_PRIVATE_DEPENDS})
endfunction()

# moetwin_add_test(NAME SOURCES ... DEPENDS ...): a GoogleTest binary registered with ctest.
# Tests find data through MOETWIN_SOURCE_DIR (the repository root), never through the working directory.
function(moetwin_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS} GTest::gtest GTest::gmock GTest::gtest_main moetwin_warnings
    moetwin_test_support)
  target_compile_definitions(${name} PRIVATE MOETWIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    MOETWIN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT
    "MOETWIN_CATALOG=${PROJECT_SOURCE_DIR}/catalog/data")
endfunction()

# moetwin_add_benchmark(NAME SOURCES ... DEPENDS ... [SMOKE_FILTER regex]): a Google Benchmark binary.
# ctest runs it once as a smoke test (<name>_smoke: the cases matching SMOKE_FILTER, default all, each for
# at least 0.01 s): it must run and exit 0; no timing is asserted (CI boxes are shared and noisy).
function(moetwin_add_benchmark name)
  if(NOT MOETWIN_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "SMOKE_FILTER" "SOURCES;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS} benchmark::benchmark moetwin_warnings)
  target_compile_definitions(${name} PRIVATE MOETWIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT ARG_SMOKE_FILTER)
    set(ARG_SMOKE_FILTER ".")
  endif()
  # benchmark 1.7 (Debian 12) takes --benchmark_min_time in plain seconds.
  add_test(NAME ${name}_smoke COMMAND ${name} --benchmark_min_time=0.01 "--benchmark_filter=${ARG_SMOKE_FILTER}")
  set_tests_properties(${name}_smoke PROPERTIES ENVIRONMENT "MOETWIN_CATALOG=${PROJECT_SOURCE_DIR}/catalog/data")
endfunction()
