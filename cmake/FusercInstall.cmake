# What `cmake --install` puts under the prefix, for find_package(fuserc) in other projects:
#
#   bin/fuserc                         fuserc::fuserc, the compiler
#   lib/libfuserc.so                   fuserc::runtime, the runtime with its C interface: load a
#                                      package, bind sizes, launch on a GPU (the CUDA driver,
#                                      loaded with dlopen) or in the CPU emulator
#   include/fuserc/fuserc_runtime.h    its header (#include "fuserc_runtime.h")
#   lib/cmake/fuserc/                  fusercConfig.cmake, its version file, the exported
#                                      targets and FusercAddPackage.cmake (fuserc_add_package)
#
# The runtime's C++ API (runtime/api/package.h, plan.h) includes the loader's internal headers
# and libfuserc.so exports the C functions only, so the C interface is what is installed.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(fuserc_shared PROPERTIES EXPORT_NAME runtime)
target_include_directories(fuserc_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/api>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/fuserc>)
# What find_package(fuserc) must find for fuserc::runtime's link interface: nothing (a shared
# library that links only the C and C++ standard libraries).
set(FUSERC_RUNTIME_DEPENDENCIES "")

# The same names inside this build, so that fuserc_add_package works here too.
add_executable(fuserc::fuserc ALIAS fuserc)
add_library(fuserc::runtime ALIAS fuserc_shared)
include(${PROJECT_SOURCE_DIR}/cmake/FusercAddPackage.cmake)

install(TARGETS fuserc fuserc_shared EXPORT fusercTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/api/fuserc_runtime.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuserc)

set(_fuserc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/fuserc)
install(EXPORT fusercTargets NAMESPACE fuserc:: DESTINATION ${_fuserc_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fusercConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/fusercConfig.cmake
                              INSTALL_DESTINATION ${_fuserc_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/fusercConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/fusercConfig.cmake ${CMAKE_BINARY_DIR}/fusercConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FusercAddPackage.cmake
        DESTINATION ${_fuserc_cmake_dir})
