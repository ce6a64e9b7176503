# winnow_add_library(<target> EXPORT_NAME <name> EXPORT_SET <set> SOURCES <files...>
#                    [INCLUDE_DIRS <folders...>])
#
# One static winnow library: alias winnow::<name>, public headers in the
# folder's include/ (or in each of INCLUDE_DIRS, relative to the folder), installed with its headers into export set <set> (see
# cmake/WinnowInstall.cmake).
function(winnow_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPORT_NAME;EXPORT_SET" "SOURCES;INCLUDE_DIRS")
  add_library(${target} STATIC ${arg_SOURCES})
  add_library(winnow::${arg_EXPORT_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME} OUTPUT_NAME ${target})
  if(NOT arg_INCLUDE_DIRS)
    set(arg_INCLUDE_DIRS include)
  endif()
  foreach(dir IN LISTS arg_INCLUDE_DIRS)
    target_include_directories(${target} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/${dir}>)
    install(DIRECTORY ${dir}/winnow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endforeach()
  target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT ${arg_EXPORT_SET}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
