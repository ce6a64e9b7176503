# WINNOW_SANITIZE: builds every winnow target with AddressSanitizer and
# UndefinedBehaviorSanitizer. Any UB report aborts the process (no recovery),
# so a test with UB fails instead of printing a warning and passing.
# Third-party libraries (LibTorch, FAISS, OpenBLAS) are not instrumented; the
# runtime options and leak suppressions for them are in
# cmake/lsan-suppressions.txt (see docs/testing.md and scripts/test --sanitize).
if(NOT WINNOW_SANITIZE)
  return()
endif()

set(WINNOW_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer)
# -O1 (after the build type's -O3, so it wins): the optimisation level ASan
# is designed for, with readable stacks and far shorter compiles. -g1: line
# tables for the reports.
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${WINNOW_SANITIZE_FLAGS};-O1;-g1>")
add_link_options(-fsanitize=address,undefined)
message(STATUS "winnow: WINNOW_SANITIZE=ON: building with ASan and UBSan")
