# `cmake --build build --target package` makes a .deb with CPack. Its dependencies are worked out
# by dpkg-shlibdeps from the libraries the binary links (Qt 6, Graphviz, LLVM 16, SQLite,
# OpenBLAS), so they are Debian's own runtime packages; nothing CUDA is linked (NVRTC, the
# driver and cuBLAS are opened at run time), so the package installs on machines without a GPU.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/org.fusebox.Fusebox.desktop DESTINATION share/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/org.fusebox.Fusebox.svg DESTINATION share/icons/hicolor/scalable/apps)
configure_file(${PROJECT_SOURCE_DIR}/packaging/org.fusebox.Fusebox.metainfo.xml
               ${PROJECT_BINARY_DIR}/packaging/org.fusebox.Fusebox.metainfo.xml @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/org.fusebox.Fusebox.metainfo.xml DESTINATION share/metainfo)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fusebox)
set(CPACK_PACKAGE_VENDOR "Fusebox")
set(CPACK_PACKAGE_CONTACT "Fusebox developers <dev@fusebox.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ML compiler inspector: a PyTorch-2-style compile pipeline, step by step")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_FILE_NAME "fusebox_${PROJECT_VERSION}_amd64")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "graphviz, libonnx-testdata")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
