# Runs one libFuzzer target for a bounded time on a copy of its seed corpus,
# so the repository's corpus is never written. Fails when the fuzzer finds a
# crash, a leak, UB, a timeout or an out-of-memory input; the input is left
# in WORK_DIR (printed) and the fuzzer's report is in the test output.
#
#   cmake -DFUZZER=<binary> -DCORPUS=<seed dir> -DWORK_DIR=<scratch dir>
#         -DSECONDS=<n> -P run_fuzz.cmake
foreach(var IN ITEMS FUZZER CORPUS WORK_DIR SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/corpus ${WORK_DIR}/artifacts)
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK_DIR}/corpus)

# -timeout: one input taking longer is a hang; -rss_limit_mb and
# -malloc_limit_mb: an input making the parser allocate more is a bug.
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
          -malloc_limit_mb=1024 -print_final_stats=1
          -artifact_prefix=${WORK_DIR}/artifacts/ ${WORK_DIR}/corpus
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  file(GLOB found ${WORK_DIR}/artifacts/*)
  message(FATAL_ERROR "${FUZZER} failed (exit ${result}); inputs: ${found}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
