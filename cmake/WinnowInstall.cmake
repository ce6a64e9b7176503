# `cmake --install` lays out headers, libraries and a package config, so that
# another project can find_package(winnow) and link winnow::pruning and
# winnow::dataset (and winnow::torch when the LibTorch plugin was built).
include(CMakePackageConfigHelpers)

set(WINNOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/winnow)

install(EXPORT winnowTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
install(EXPORT winnowDatasetTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
if(WINNOW_HAVE_TORCH)
  install(EXPORT winnowTorchTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
endif()
if(TARGET winnow_store)
  install(EXPORT winnowStoreTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
endif()
if(TARGET winnow_index)
  install(EXPORT winnowIndexTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
endif()
if(TARGET winnow_image)
  install(EXPORT winnowImageTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
endif()
if(TARGET winnow_curation)
  install(EXPORT winnowCurationTargets NAMESPACE winnow:: DESTINATION ${WINNOW_CMAKE_DIR})
endif()

configure_package_config_file(cmake/winnowConfig.cmake.in
  ${PROJECT_BINARY_DIR}/winnowConfig.cmake
  INSTALL_DESTINATION ${WINNOW_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/winnowConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/winnowConfig.cmake ${PROJECT_BINARY_DIR}/winnowConfigVersion.cmake
  DESTINATION ${WINNOW_CMAKE_DIR})
