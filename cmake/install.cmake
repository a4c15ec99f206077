# Install rules: `cmake --install` puts the headers under <prefix>/include/sessionrt (their
# layout kept: they include each other as "messages/x.hpp"), the static libraries under
# <prefix>/lib, the sessionrt CLI under <prefix>/bin, and a CMake package under
# <prefix>/lib/cmake/sessionrt, so that a host writes
#   find_package(sessionrt CONFIG REQUIRED)
#   target_link_libraries(host PRIVATE sessionrt::runtime)
# Exported: sessionrt::messages, ::storage, ::actors, ::runtime, and sessionrt::flags (the
# include dir and C++20 only: our warning and sanitizer compile flags stay in this build).
# Libraries found by path here (CAF, stb) are exported as imported targets that
# sessionrtConfig.cmake finds again on the host (the paths found here are only hints), so the
# package names no path of this build.
# Included last by the top-level CMakeLists.txt, once every target and option is set.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SESSIONRT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sessionrt)
set(sessionrt_libraries sessionrt_messages sessionrt_storage sessionrt_actors sessionrt_providers sessionrt_runtime
    sessionrt_gateway)

# sessionrt::flags: the include dir and the language level reach hosts; every compile option
# (-Wall -Wextra, -Werror, sanitizers) applies to this build only. Link options stay: a
# sanitized build's libraries cannot link without them.
target_include_directories(sessionrt_flags INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/sessionrt>)
target_compile_features(sessionrt_flags INTERFACE cxx_std_20)
get_target_property(flag_options sessionrt_flags INTERFACE_COMPILE_OPTIONS)
if(flag_options)
  list(TRANSFORM flag_options REPLACE "^(.+)$" "$<BUILD_INTERFACE:\\1>")
  set_property(TARGET sessionrt_flags PROPERTY INTERFACE_COMPILE_OPTIONS "${flag_options}")
endif()

# Libraries linked by absolute path: here that path, on a host the imported target
# sessionrtConfig.cmake makes.
set(path_dependencies "${CAF_CORE}=sessionrt::caf_core" "${CAF_IO}=sessionrt::caf_io" "${STB_LIB}=sessionrt::stb"
    "${WSLAY_LIB}=sessionrt::wslay" "${HTTP_PARSER_LIB}=sessionrt::http_parser")
foreach(target IN LISTS sessionrt_libraries)
  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT links)
    continue()
  endif()
  set(exported_links "")
  foreach(item IN LISTS links)
    set(replacement "${item}")
    foreach(dependency IN LISTS path_dependencies)
      string(REGEX MATCH "^(.*)=(.*)$" _ "${dependency}")
      if(item STREQUAL CMAKE_MATCH_1)
        set(replacement "$<BUILD_INTERFACE:${CMAKE_MATCH_1}>;$<INSTALL_INTERFACE:${CMAKE_MATCH_2}>")
      elseif(item STREQUAL "$<LINK_ONLY:${CMAKE_MATCH_1}>")
        set(replacement "$<LINK_ONLY:$<BUILD_INTERFACE:${CMAKE_MATCH_1}>>;$<LINK_ONLY:$<INSTALL_INTERFACE:${CMAKE_MATCH_2}>>")
      endif()
    endforeach()
    list(APPEND exported_links "${replacement}")
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES "${exported_links}")
endforeach()
# stb's include dir, if a library passes it on: on a host, sessionrt::stb carries it.
foreach(target IN LISTS sessionrt_libraries)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  list(FIND dirs "${STB_INCLUDE}" at)
  if(dirs AND STB_INCLUDE AND at GREATER -1)
    list(REMOVE_AT dirs ${at})
    list(INSERT dirs ${at} "$<BUILD_INTERFACE:${STB_INCLUDE}>")
    set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
  endif()
endforeach()

set_target_properties(sessionrt_flags PROPERTIES EXPORT_NAME flags)
set_target_properties(sessionrt_messages PROPERTIES EXPORT_NAME messages)
set_target_properties(sessionrt_storage PROPERTIES EXPORT_NAME storage)
set_target_properties(sessionrt_actors PROPERTIES EXPORT_NAME actors)
set_target_properties(sessionrt_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(sessionrt_providers PROPERTIES EXPORT_NAME providers)
set_target_properties(sessionrt_gateway PROPERTIES EXPORT_NAME gateway)

install(TARGETS sessionrt_flags ${sessionrt_libraries} EXPORT sessionrtTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS sessionrt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY messages storage actors runtime gateway
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sessionrt
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT sessionrtTargets NAMESPACE sessionrt:: DESTINATION ${SESSIONRT_INSTALL_CMAKEDIR})

# sessionrtConfig.cmake: finds what the libraries' link interfaces name, then the targets.
# The template is written here, not kept beside this file, so the install logic is one file.
foreach(dependency CAF_CORE CAF_IO STB_LIB WSLAY_LIB HTTP_PARSER_LIB)
  get_filename_component(${dependency}_HINT "${${dependency}}" DIRECTORY)
endforeach()
get_filename_component(CAF_INCLUDE_HINT "${CAF_CORE_HINT}/../../include" ABSOLUTE)
file(WRITE ${PROJECT_BINARY_DIR}/sessionrtConfig.cmake.in [=[
# sessionrt's CMake package: sessionrt::runtime and sessionrt::gateway (and ::providers, ::actors,
# ::storage, ::messages).
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_dependency(Boost 1.81 COMPONENTS json)
find_dependency(fmt)
find_dependency(spdlog)
find_dependency(CLI11)
find_dependency(date)
find_dependency(OpenSSL)
find_dependency(ICU COMPONENTS uc)
find_dependency(SQLite3)  # OpenClaw 2026.8+ agent databases (runtime/openclaw)
find_dependency(PkgConfig)
foreach(module UV=libuv CURL=libcurl PCRE2=libpcre2-8 ZSTD=libzstd)
  string(REPLACE "=" ";" pair "${module}")
  list(GET pair 0 prefix)
  list(GET pair 1 pc)
  if(NOT TARGET PkgConfig::${prefix})
    pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${pc})
    if(NOT TARGET PkgConfig::${prefix})
      set(sessionrt_FOUND FALSE)
      set(sessionrt_NOT_FOUND_MESSAGE "sessionrt needs ${pc}, which pkg-config did not find (${pc}.pc)")
      return()
    endif()
  endif()
endforeach()
# Libraries without a CMake package of their own (this build found them at the hinted paths).
function(sessionrt_import_library target name hint)
  if(TARGET ${target})
    return()
  endif()
  find_library(sessionrt_${name}_LIBRARY ${name} HINTS ${hint})
  if(NOT sessionrt_${name}_LIBRARY)
    set(sessionrt_FOUND FALSE PARENT_SCOPE)
    set(sessionrt_NOT_FOUND_MESSAGE "sessionrt needs lib${name}, which find_library did not find" PARENT_SCOPE)
    return()
  endif()
  add_library(${target} UNKNOWN IMPORTED)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${sessionrt_${name}_LIBRARY}")
endfunction()
set(sessionrt_FOUND TRUE)
sessionrt_import_library(sessionrt::caf_core caf_core "@CAF_CORE_HINT@")
sessionrt_import_library(sessionrt::caf_io caf_io "@CAF_IO_HINT@")
sessionrt_import_library(sessionrt::stb stb "@STB_LIB_HINT@")
sessionrt_import_library(sessionrt::wslay wslay "@WSLAY_LIB_HINT@")
sessionrt_import_library(sessionrt::http_parser http_parser "@HTTP_PARSER_LIB_HINT@")
if(NOT sessionrt_FOUND)
  return()
endif()
find_path(sessionrt_CAF_INCLUDE_DIR caf/all.hpp HINTS "@CAF_INCLUDE_HINT@")
if(sessionrt_CAF_INCLUDE_DIR)  # a host includes actors/caf_types.hpp, which includes CAF
  set_property(TARGET sessionrt::caf_core APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${sessionrt_CAF_INCLUDE_DIR}")
endif()
find_path(sessionrt_STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb HINTS "@CAF_INCLUDE_HINT@")
if(sessionrt_STB_INCLUDE_DIR)
  set_property(TARGET sessionrt::stb APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${sessionrt_STB_INCLUDE_DIR}")
endif()
set_property(TARGET sessionrt::caf_io APPEND PROPERTY INTERFACE_LINK_LIBRARIES sessionrt::caf_core)
include("${CMAKE_CURRENT_LIST_DIR}/sessionrtTargets.cmake")
check_required_components(sessionrt)
]=])
configure_package_config_file(${PROJECT_BINARY_DIR}/sessionrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sessionrtConfig.cmake INSTALL_DESTINATION ${SESSIONRT_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sessionrtConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sessionrtConfig.cmake ${PROJECT_BINARY_DIR}/sessionrtConfigVersion.cmake
        DESTINATION ${SESSIONRT_INSTALL_CMAKEDIR})
