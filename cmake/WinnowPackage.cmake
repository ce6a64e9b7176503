# `cpack -G DEB` (in the build folder): a `winnow` Debian package with the CLI,
# the libraries, headers and CMake package config, the Python module where
# Debian's python3 finds it (/usr/lib/python3/dist-packages), and a systemd
# unit for the daemon (winnow-serve@.service) running as the `winnow` user.
# Library dependencies come from dpkg-shlibdeps; docs/packaging.md.
install(FILES packaging/winnow-serve@.service DESTINATION lib/systemd/system)
install(FILES packaging/serve.conf README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES docs/daemon.md docs/packaging.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME winnow)
set(CPACK_PACKAGE_VENDOR winnow)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "data-centric training: dynamic data pruning and a dataset curation daemon")
set(CPACK_PACKAGE_DESCRIPTION
    "winnow prunes well-learned samples during training (LibTorch and PyTorch) and curates a
 growing labelled dataset: exact and near duplicates, label issues, informative samples,
 annotation quality reports. This package holds the `winnow` CLI and daemon, the C++
 libraries and headers, and the Python module.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "winnow maintainers <winnow@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Not found by shlibdeps: the Python side and the postinst's adduser.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-torch, python3-numpy, adduser")
# winnow.dask, curation on a Dask cluster (docs/distributed-curation.md).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-dask, python3-distributed, python3-pandas")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
