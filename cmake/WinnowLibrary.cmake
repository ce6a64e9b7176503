# winnow_add_library(<target> EXPORT_NAME <name> EXPORT_SET <set> SOURCES <files...>)
#
# One static winnow library: alias winnow::<name>, public headers in the
# folder's include/, installed with its headers into export set <set> (see
# cmake/WinnowInstall.cmake).
function(winnow_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPORT_NAME;EXPORT_SET" "SOURCES")
  add_library(${target} STATIC ${arg_SOURCES})
  add_library(winnow::${arg_EXPORT_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT ${arg_EXPORT_SET}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/winnow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
