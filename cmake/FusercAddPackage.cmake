# fuserc_add_package: compile a fusion graph into a package as a step of a CMake build.
#
#   fuserc_add_package(<target> <name> GRAPH <graph.json> ARCHS <sm_XX>...
#                      [OUTPUT <file.fpkg>] [CACHE_URL <url>]
#                      [OPTIONS <more fuserc compile options>...])
#   (also accepted: fuserc_add_package(TARGET <target> NAME <name> GRAPH ... ARCHS ...))
#
# Adds a custom command running `fuserc compile <graph> -o <output> --arch <archs> --depfile
# <output>.d --quiet`, so that Make and Ninja rerun it exactly when the graph (or anything the
# depfile names) or fuserc itself changed, and makes <target> depend on the package, so it is
# built before <target>. <output> defaults to ${CMAKE_CURRENT_BINARY_DIR}/<name>.fpkg; a
# relative GRAPH is relative to ${CMAKE_CURRENT_SOURCE_DIR}, a relative OUTPUT to
# ${CMAKE_CURRENT_BINARY_DIR}. The package's path is also set in the caller's scope as
# <name>_FUSERC_PACKAGE.
#
# NVRTC results are cached by content (see `fuserc cache --help`), and fuserc writes the same
# bytes for the same graph and options wherever and whenever it runs, so the step is safe for
# shared and remote build caches. CACHE_URL (default: the CMake variable FUSERC_CACHE_URL, if
# set) passes `--cache-url`: NVRTC results shared by every machine through an HTTP cache server
# (`fuserc compile --help`). The environment variable FUSERC_CACHE_URL works too, at build time.

if(CMAKE_VERSION VERSION_LESS 3.20)  # DEPFILE with the Makefile generators, cmake_path
  message(FATAL_ERROR "fuserc_add_package needs CMake 3.20 or newer")
endif()

function(fuserc_add_package)
  if(ARGC GREATER 0 AND ARGV0 STREQUAL "TARGET")
    cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;NAME;GRAPH;OUTPUT;CACHE_URL"
                          "ARCHS;OPTIONS")
  else()
    if(ARGC LESS 2)
      message(FATAL_ERROR "fuserc_add_package: usage: fuserc_add_package(<target> <name> "
                          "GRAPH <graph.json> ARCHS <sm_XX>... [OUTPUT <file.fpkg>])")
    endif()
    set(arg_TARGET "${ARGV0}")
    set(arg_NAME "${ARGV1}")
    cmake_parse_arguments(PARSE_ARGV 2 arg "" "GRAPH;OUTPUT;CACHE_URL" "ARCHS;OPTIONS")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fuserc_add_package: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TARGET OR NOT TARGET "${arg_TARGET}")
    message(FATAL_ERROR "fuserc_add_package: '${arg_TARGET}' is not a target")
  endif()
  if(NOT arg_NAME MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "fuserc_add_package: the name '${arg_NAME}' must be letters, digits, "
                        "'_', '.' or '-'")
  endif()
  if(NOT arg_GRAPH)
    message(FATAL_ERROR "fuserc_add_package(${arg_NAME}): GRAPH <graph.json> is required")
  endif()
  if(NOT arg_ARCHS)
    message(FATAL_ERROR "fuserc_add_package(${arg_NAME}): ARCHS <sm_XX>... is required")
  endif()
  if(NOT TARGET fuserc::fuserc)
    message(FATAL_ERROR "fuserc_add_package: no fuserc::fuserc executable (find_package(fuserc))")
  endif()

  cmake_path(ABSOLUTE_PATH arg_GRAPH BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE
             OUTPUT_VARIABLE graph)
  if(NOT arg_OUTPUT)
    set(arg_OUTPUT "${arg_NAME}.fpkg")
  endif()
  cmake_path(ABSOLUTE_PATH arg_OUTPUT BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE
             OUTPUT_VARIABLE output)
  list(JOIN arg_ARCHS "," archs)
  set(depfile "${output}.d")
  if(NOT arg_CACHE_URL AND FUSERC_CACHE_URL)
    set(arg_CACHE_URL "${FUSERC_CACHE_URL}")
  endif()
  set(cache_options "")
  if(arg_CACHE_URL)
    set(cache_options --cache-url "${arg_CACHE_URL}")
  endif()

  add_custom_command(
    OUTPUT "${output}"
    COMMAND fuserc::fuserc compile "${graph}" -o "${output}" --arch "${archs}"
            --depfile "${depfile}" --quiet ${cache_options} ${arg_OPTIONS}
    DEPENDS "${graph}" "$<TARGET_FILE:fuserc::fuserc>"
    DEPFILE "${depfile}"
    COMMENT "fuserc: compiling ${arg_NAME} (${archs})"
    VERBATIM)
  set(step "${arg_TARGET}_fuserc_package_${arg_NAME}")
  add_custom_target("${step}" DEPENDS "${output}")
  add_dependencies("${arg_TARGET}" "${step}")
  set("${arg_NAME}_FUSERC_PACKAGE" "${output}" PARENT_SCOPE)
endfunction()
