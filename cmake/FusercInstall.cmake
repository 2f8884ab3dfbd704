# What `cmake --install` puts under the prefix, for find_package(fuserc) in other projects:
#
#   bin/fuserc                         fuserc::fuserc, the compiler
#   lib/<the runtime library>          fuserc::runtime, what programs link to load packages
#   include/fuserc/...                 the runtime's public headers
#   lib/cmake/fuserc/                  fusercConfig.cmake, its version file, the exported
#                                      targets and FusercAddPackage.cmake (fuserc_add_package)
#
# The runtime library: FUSERC_RUNTIME_TARGET (a target of this build) and its public headers
# FUSERC_RUNTIME_HEADERS, installed under include/fuserc keeping their paths relative to
# FUSERC_RUNTIME_HEADER_ROOT (a folder of the sources). A SHARED library is installed as
# is; a STATIC one is bundled with every static library of this project it links (one archive),
# and the external libraries they link become its link interface.
#
# Today the runtime is the static loader (runtime/executable.h: load, bind; run_package.h with
# the CPU emulator). When the runtime library with the C interface exists (libfuserc.so,
# runtime/api/fuserc_runtime.h), it is picked up instead.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(TARGET fuserc_shared)  # #include "fuserc_runtime.h"
  set(FUSERC_RUNTIME_TARGET fuserc_shared)
  set(FUSERC_RUNTIME_HEADER_ROOT runtime/api)
  set(FUSERC_RUNTIME_HEADERS fuserc_runtime.h)
else()  # #include "runtime/executable.h"
  set(FUSERC_RUNTIME_TARGET fuserc_loader)
  set(FUSERC_RUNTIME_HEADER_ROOT .)
  set(FUSERC_RUNTIME_HEADERS runtime/executable.h runtime/run_package.h
                             runtime/emulator_device.h)
endif()

# Every project target `target` links, directly or not (a worklist: no recursion), split into
# this project's static libraries (out_static) and everything else it links from outside
# (out_external: imported targets and plain library names). Interface-only helper targets of
# the project (warnings) are skipped.
function(fuserc_link_closure target out_static out_external)
  set(static "")
  set(external "")
  set(todo "${target}")
  set(seen "")
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${t}")
    get_target_property(type "${t}" TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND static "${t}")
    endif()
    get_target_property(links "${t}" LINK_LIBRARIES)
    if(NOT links)
      continue()
    endif()
    foreach(item IN LISTS links)
      if(item MATCHES "^\\$<LINK_LIBRARY:[A-Z_]+,(.*)>$")
        set(item "${CMAKE_MATCH_1}")
      endif()
      if(item MATCHES "^-|^\\$<")
        continue()  # linker options and other generator expressions stay with their target
      endif()
      if(TARGET "${item}")
        get_target_property(imported "${item}" IMPORTED)
        if(imported)
          list(APPEND external "${item}")
        else()
          list(APPEND todo "${item}")
        endif()
      else()
        list(APPEND external "${item}")
      endif()
    endforeach()
  endwhile()
  list(REMOVE_DUPLICATES external)
  set(${out_static} "${static}" PARENT_SCOPE)
  set(${out_external} "${external}" PARENT_SCOPE)
endfunction()

get_target_property(_fuserc_runtime_type ${FUSERC_RUNTIME_TARGET} TYPE)
set(FUSERC_RUNTIME_DEPENDENCIES "")
if(_fuserc_runtime_type STREQUAL "STATIC_LIBRARY")
  fuserc_link_closure(${FUSERC_RUNTIME_TARGET} _fuserc_static _fuserc_external)
  set(_fuserc_objects "")
  foreach(lib IN LISTS _fuserc_static)
    list(APPEND _fuserc_objects "$<TARGET_OBJECTS:${lib}>")
  endforeach()
  add_library(fuserc_runtime_bundle STATIC ${_fuserc_objects})
  add_dependencies(fuserc_runtime_bundle ${_fuserc_static})
  set_target_properties(fuserc_runtime_bundle PROPERTIES
    OUTPUT_NAME fuserc_runtime LINKER_LANGUAGE CXX EXPORT_NAME runtime
    ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  find_package(Threads REQUIRED)
  target_link_libraries(fuserc_runtime_bundle INTERFACE ${_fuserc_external} Threads::Threads)
  target_include_directories(fuserc_runtime_bundle INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<BUILD_INTERFACE:${FUSERC_GENERATED_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/fuserc>)
  target_compile_features(fuserc_runtime_bundle INTERFACE cxx_std_20)
  set(_fuserc_installed_runtime fuserc_runtime_bundle)
  # find_dependency() for each imported target's package (nlohmann_json::nlohmann_json ->
  # nlohmann_json), and Threads.
  foreach(item IN LISTS _fuserc_external)
    if(item MATCHES "^([A-Za-z0-9_]+)::")
      list(APPEND FUSERC_RUNTIME_DEPENDENCIES "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(APPEND FUSERC_RUNTIME_DEPENDENCIES Threads)
else()
  set_target_properties(${FUSERC_RUNTIME_TARGET} PROPERTIES EXPORT_NAME runtime)
  target_include_directories(${FUSERC_RUNTIME_TARGET} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/fuserc>)
  set(_fuserc_installed_runtime ${FUSERC_RUNTIME_TARGET})
endif()
list(REMOVE_DUPLICATES FUSERC_RUNTIME_DEPENDENCIES)

# The same names inside this build, so that fuserc_add_package works here too.
add_executable(fuserc::fuserc ALIAS fuserc)
add_library(fuserc::runtime ALIAS ${_fuserc_installed_runtime})
include(${PROJECT_SOURCE_DIR}/cmake/FusercAddPackage.cmake)

install(TARGETS fuserc ${_fuserc_installed_runtime} EXPORT fusercTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(header IN LISTS FUSERC_RUNTIME_HEADERS)
  cmake_path(GET header PARENT_PATH dir)
  install(FILES ${PROJECT_SOURCE_DIR}/${FUSERC_RUNTIME_HEADER_ROOT}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuserc/${dir})
endforeach()
if(_fuserc_runtime_type STREQUAL "STATIC_LIBRARY")
  # The C++ headers the public ones include: those of the bundled libraries' folders.
  foreach(dir IN ITEMS core/base serde runtime)
    cmake_path(GET dir PARENT_PATH parent)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuserc/${parent}
            FILES_MATCHING PATTERN "*.h" PATTERN "include" EXCLUDE
            # the package writer's headers belong to the compiler
            PATTERN "package_writer.h" EXCLUDE PATTERN "compiled_view.h" EXCLUDE
            PATTERN "expr_program.h" EXCLUDE)
  endforeach()
  install(DIRECTORY ${FUSERC_GENERATED_DIR}/fuserc
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuserc FILES_MATCHING PATTERN "*.h")
endif()

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
