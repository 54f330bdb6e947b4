# `cmake --install <build> [--prefix P]`: the C ABI as a library of its ecosystem —
# libuaii.so (with its soname links), uaii.h, a pkg-config file (uaii.pc) and a CMake
# package (find_package(uaii): target uaii::uaii). docs/c_api.md, "Installing".
# The C++ API is linked into libuaii statically and not exported, so its headers are
# not installed: a C++ program uses it from a checkout (add_subdirectory, uaii_api).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(UAII_CAPI_VERSION_STRING 0.4.0)
install(TARGETS uaii_shared EXPORT uaiiTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT uaii_capi
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/capi/uaii.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT uaii_capi)
install(EXPORT uaiiTargets NAMESPACE uaii:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii COMPONENT uaii_capi)

# From the .pc file's directory up to the prefix (lib/pkgconfig -> ../..; a multiarch
# lib/x86_64-linux-gnu/pkgconfig -> ../../..), so the file is relocatable.
file(RELATIVE_PATH UAII_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/uaii.pc.in ${PROJECT_BINARY_DIR}/install/uaii.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/uaii.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT uaii_capi)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/install/uaiiConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/install/uaiiConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/uaiiConfigVersion.cmake
                                 VERSION ${UAII_CAPI_VERSION_STRING} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/uaiiConfig.cmake ${PROJECT_BINARY_DIR}/install/uaiiConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/uaii COMPONENT uaii_capi)
