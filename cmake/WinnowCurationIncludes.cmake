# winnow_check_curation_includes(<dir> <folder> <allowed folders>)
#
# Fails (FATAL_ERROR) when a .h or .cpp file under <dir> includes
# "winnow/curation/<x>/..." with <x> not in <allowed folders>, naming the file,
# the line and the folders it may use. Used by winnow_curation_folder at
# configure time and, in script mode, by the test that shows the check fails
# (tests/cmake): cmake -DDIR=<dir> -DFOLDER=<name> -DALLOWED=<a,b> -P <this file>.
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # IN_LIST, as in the project
endif()

function(winnow_check_curation_includes dir folder allowed)
  file(GLOB_RECURSE files ${dir}/*.h ${dir}/*.cpp)
  set(problems "")
  foreach(file IN LISTS files)
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"winnow/curation/")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "\"winnow/curation/([a-z_]+)/" _ "${line}")
      set(used ${CMAKE_MATCH_1})
      if(used STREQUAL "")
        continue()  # a header straight under winnow/curation/: there is none
      endif()
      if(NOT used IN_LIST allowed)
        file(RELATIVE_PATH shown ${dir} ${file})
        string(STRIP "${line}" line)
        string(APPEND problems "\n  ${folder}/${shown}: ${line}")
      endif()
    endforeach()
  endforeach()
  if(problems)
    string(REPLACE ";" ", " allowed_text "${allowed}")
    message(FATAL_ERROR "curation/${folder} includes headers of folders its target does not link "
                        "(it may use: ${allowed_text}):${problems}\n"
                        "Link the folder in curation/CMakeLists.txt if the arrow is meant "
                        "(docs/architecture.md), or move the code.")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED DIR)
  string(REPLACE "," ";" ALLOWED "${ALLOWED}")  # a,b from the command line
  winnow_check_curation_includes(${DIR} ${FOLDER} "${ALLOWED}")
endif()
