# `cmake --install <build> [--prefix P]`: the C ABI as a library of its ecosystem —
# libuaii.so (with its soname links), uaii.h, a pkg-config file (uaii.pc) and a CMake
# package (find_package(uaii): target uaii::uaii). docs/c_api.md, "Installing".
# Component uaii_cxx: the C++ API (include/uaii) as libuaii_cxx.so.0 (lib/api: the
# modules linked whole, namespace uaii exported), its headers under include/uaii/, a
# pkg-config file (uaii-cxx.pc) and the target uaii::uaii_cxx of the same CMake package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(UAII_CAPI_VERSION_STRING 0.5.0)
install(TARGETS uaii_shared EXPORT uaiiTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT uaii_capi
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/capi/uaii.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT uaii_capi)
install(EXPORT uaiiTargets NAMESPACE uaii:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii COMPONENT uaii_capi)

install(TARGETS uaii_cxx EXPORT uaiiCxxTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT uaii_cxx)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/uaii DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT uaii_cxx
        FILES_MATCHING PATTERN "*.h")
install(EXPORT uaiiCxxTargets NAMESPACE uaii:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii COMPONENT uaii_cxx)

# From the .pc file's directory up to the prefix (lib/pkgconfig -> ../..; a multiarch
# lib/x86_64-linux-gnu/pkgconfig -> ../../..), so the file is relocatable.
file(RELATIVE_PATH UAII_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/uaii.pc.in ${PROJECT_BINARY_DIR}/install/uaii.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/uaii.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT uaii_capi)
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/uaii-cxx.pc.in ${PROJECT_BINARY_DIR}/install/uaii-cxx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/uaii-cxx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT uaii_cxx)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/install/uaiiConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/install/uaiiConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/uaiiConfigVersion.cmake
                                 VERSION ${UAII_CAPI_VERSION_STRING} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/uaiiConfig.cmake ${PROJECT_BINARY_DIR}/install/uaiiConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii COMPONENT uaii_capi)
