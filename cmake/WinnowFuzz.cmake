# WINNOW_FUZZ: builds the libFuzzer targets of tests/fuzz/ with clang (a
# separate project, since the main build uses g++) and registers three short
# bounded fuzz runs as ctests. On by default when a clang with
# -fsanitize=fuzzer is found; longer runs are described in tests/fuzz/README.md.
include_guard(GLOBAL)

# WINNOW_FUZZ_CXX: a clang++ that can link a libFuzzer program (Debian:
# clang-14), probed once and cached; empty when there is none.
if(NOT DEFINED WINNOW_FUZZ_CXX)
  find_program(winnow_fuzz_clang NAMES clang++-14 clang++)
  set(winnow_fuzz_probe_result 1)
  if(winnow_fuzz_clang)
    set(probe ${PROJECT_BINARY_DIR}/CMakeFiles/winnow_fuzz_probe.cpp)
    file(WRITE ${probe} "#include <cstddef>\n#include <cstdint>\n"
      "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
    execute_process(
      COMMAND ${winnow_fuzz_clang} -fsanitize=fuzzer,address,undefined ${probe}
              -o ${PROJECT_BINARY_DIR}/CMakeFiles/winnow_fuzz_probe
      RESULT_VARIABLE winnow_fuzz_probe_result OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(winnow_fuzz_probe_result EQUAL 0)
    set(WINNOW_FUZZ_CXX ${winnow_fuzz_clang} CACHE FILEPATH "clang++ for the fuzz targets")
  else()
    set(WINNOW_FUZZ_CXX "" CACHE FILEPATH "clang++ for the fuzz targets")
  endif()
  unset(winnow_fuzz_clang CACHE)
endif()

set(winnow_fuzz_default OFF)
if(WINNOW_FUZZ_CXX)
  set(winnow_fuzz_default ON)
endif()
option(WINNOW_FUZZ "Build the libFuzzer targets with clang and run them briefly in ctest"
  ${winnow_fuzz_default})

if(NOT WINNOW_FUZZ)
  message(STATUS "winnow: fuzz targets off (WINNOW_FUZZ=OFF, or no clang++ with "
                 "-fsanitize=fuzzer found; scripts/install-deps installs clang-14)")
  return()
endif()
if(NOT WINNOW_BUILD_TESTS OR NOT TARGET winnow_curation)
  return()
endif()
if(NOT WINNOW_FUZZ_CXX)
  message(FATAL_ERROR "WINNOW_FUZZ=ON but no clang++ can link -fsanitize=fuzzer "
                      "(install clang-14, or configure with -DWINNOW_FUZZ=OFF)")
endif()
message(STATUS "winnow: building the fuzz targets with ${WINNOW_FUZZ_CXX}")

include(ExternalProject)
set(winnow_fuzz_dir ${PROJECT_BINARY_DIR}/tests/fuzz)
ExternalProject_Add(winnow_fuzz_targets
  SOURCE_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz
  BINARY_DIR ${winnow_fuzz_dir}
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${WINNOW_FUZZ_CXX}
             -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
             -DCMAKE_BUILD_TYPE=RelWithDebInfo
             -DWINNOW_SOURCE_DIR=${PROJECT_SOURCE_DIR}
  BUILD_ALWAYS ON  # its own make decides what is out of date
  INSTALL_COMMAND ""
  USES_TERMINAL_BUILD ON)

# One short run per target on a copy of its seed corpus (tests/fuzz/corpus/).
set(WINNOW_FUZZ_SECONDS 15 CACHE STRING "Seconds each fuzz target runs under ctest")
foreach(target IN ITEMS manifest idx image)
  add_test(NAME "fuzz: ${target} (${WINNOW_FUZZ_SECONDS} s)"
    COMMAND ${CMAKE_COMMAND}
      -DFUZZER=${winnow_fuzz_dir}/fuzz_${target}
      -DCORPUS=${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${target}
      -DWORK_DIR=${winnow_fuzz_dir}/run-${target}
      -DSECONDS=${WINNOW_FUZZ_SECONDS}
      -P ${PROJECT_SOURCE_DIR}/tests/fuzz/run_fuzz.cmake)
  set_tests_properties("fuzz: ${target} (${WINNOW_FUZZ_SECONDS} s)" PROPERTIES
    LABELS fuzz TIMEOUT 120)
endforeach()
