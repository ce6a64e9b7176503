# One CMake target per curation folder (docs/architecture.md): the link lines
# are the architecture, and the build checks them.
#
# winnow_curation_folder(<folder> USES <curation folders...> [LINKS <targets...>]
#                        [PRIVATE_LINKS <targets...>] SOURCES <files...>)
#   Makes winnow_curation_<folder> (alias winnow::curation_<folder>): public
#   headers in <folder>/include, sources and private headers in <folder>/src.
#   USES names the curation folders it may include and links them PUBLIC;
#   LINKS are other PUBLIC dependencies (winnow::store, ...).
#
# The configure step fails when a file of <folder> includes a header
# "winnow/curation/<other>/..." of a folder that is neither <folder> nor one
# it uses, directly or through the folders it uses
# (cmake/WinnowCurationIncludes.cmake does the check).
include(${CMAKE_CURRENT_LIST_DIR}/WinnowCurationIncludes.cmake)

function(winnow_curation_folder folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "USES;LINKS;PRIVATE_LINKS;SOURCES")
  set(target winnow_curation_${folder})
  winnow_add_library(${target} EXPORT_NAME curation_${folder}
    EXPORT_SET winnowCurationTargets INCLUDE_DIRS ${folder}/include SOURCES ${arg_SOURCES})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/src)
  foreach(used IN LISTS arg_USES)
    if(used STREQUAL "labels")
      target_link_libraries(${target} PUBLIC winnow::labels)
    else()
      target_link_libraries(${target} PUBLIC winnow::curation_${used})
    endif()
  endforeach()
  target_link_libraries(${target} PUBLIC ${arg_LINKS} PRIVATE ${arg_PRIVATE_LINKS})

  # The folders it may include: itself and the closure of what it uses.
  set(allowed ${folder})
  foreach(used IN LISTS arg_USES)
    get_property(closure GLOBAL PROPERTY WINNOW_CURATION_CLOSURE_${used})
    list(APPEND allowed ${used} ${closure})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY WINNOW_CURATION_CLOSURE_${folder} ${allowed})
  winnow_check_curation_includes(${CMAKE_CURRENT_SOURCE_DIR}/${folder} ${folder} "${allowed}")
endfunction()
