# check_layers.cmake: no #include runs up the layer order (README.md "Layers", CONTRIBUTING.md).
#   messages < storage < actors < runtime < {gateway, sim, cluster} < app
# A file under one of these folders includes from its own folder and the folders below it only:
# gateway, sim and cluster are siblings and include nothing of each other, and nothing
# includes from app/ (the composition root: the sessionrt executable and its commands). Read
# are the #include "x/..." and <x/...> lines whose first folder is one of these (a third-party
# header is not ours); a relative include ("../x.hpp") is refused, as it would pass unseen.
# tests/, examples/, bench/ and fuzz/ sit on top and are not checked.
#   cmake -DSOURCE_DIR=<root> -P cmake/check_layers.cmake   fails listing every arrow that runs up
#   cmake -DSELF_TEST=<scratch dir> -P cmake/check_layers.cmake   plants arrows in a scratch tree
#     and fails unless the check finds exactly those
# Run by CTest as the "layers:" tests (tests/CMakeLists.txt).
cmake_minimum_required(VERSION 3.22)

# folder=rank; equal ranks are siblings.
set(LAYER_RANKS messages=0 storage=1 actors=2 runtime=3 gateway=4 sim=4 cluster=4 app=5)

# The rank of `folder`, or "" when it is not a layer.
function(layer_rank folder out)
  set(rank "")
  foreach(entry IN LISTS LAYER_RANKS)
    if(entry MATCHES "^${folder}=([0-9]+)$")
      set(rank ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out} "${rank}" PARENT_SCOPE)
endfunction()

# Every include under `root` that breaks the order, as "<file>: #include <path> (<why>)", into
# `out`; the number of files and includes read into `files_out` / `includes_out`.
function(find_upward_includes root out files_out includes_out)
  set(arrows "")
  set(file_count 0)
  set(include_count 0)
  foreach(entry IN LISTS LAYER_RANKS)
    string(REGEX MATCH "^[a-z_]+" layer "${entry}")
    layer_rank(${layer} rank)
    file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${root}
         ${root}/${layer}/*.cpp ${root}/${layer}/*.hpp ${root}/${layer}/*.h ${root}/${layer}/*.ipp)
    list(SORT files)
    foreach(f IN LISTS files)
      math(EXPR file_count "${file_count} + 1")
      file(STRINGS ${root}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
      foreach(line IN LISTS lines)
        if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">]")
          continue()
        endif()
        set(path "${CMAKE_MATCH_1}")
        math(EXPR include_count "${include_count} + 1")
        if(path MATCHES "^\\.\\.?/")
          list(APPEND arrows "${f}: #include ${path} (relative: name it from the source root)")
          continue()
        endif()
        if(NOT path MATCHES "^([a-z_]+)/")
          continue()
        endif()
        set(target ${CMAKE_MATCH_1})
        layer_rank(${target} target_rank)
        if(target_rank STREQUAL "" OR target STREQUAL layer)
          continue()
        endif()
        if(target_rank GREATER rank)
          list(APPEND arrows "${f}: #include ${path} (${layer}/ is below ${target}/)")
        elseif(target_rank EQUAL rank)
          list(APPEND arrows "${f}: #include ${path} (${layer}/ and ${target}/ are siblings)")
        endif()
      endforeach()
    endforeach()
  endforeach()
  set(${out} "${arrows}" PARENT_SCOPE)
  set(${files_out} ${file_count} PARENT_SCOPE)
  set(${includes_out} ${include_count} PARENT_SCOPE)
endfunction()

if(DEFINED SELF_TEST)
  # Three arrows the check must find, beside includes it must let pass.
  file(REMOVE_RECURSE ${SELF_TEST})
  file(WRITE ${SELF_TEST}/runtime/cli/up.hpp "#pragma once\n#include \"app/cli/command_line.hpp\"\n#include \"actors/caf_types.hpp\"\n")
  file(WRITE ${SELF_TEST}/gateway/side.cpp "#include \"gateway/side.hpp\"\n  #  include <sim/scenario.hpp>\n")
  file(WRITE ${SELF_TEST}/storage/relative.cpp "#include \"../app/main.hpp\"\n")
  file(WRITE ${SELF_TEST}/storage/fine.cpp
       "#include \"storage/fine.hpp\"\n#include <vector>\n#include <boost/json.hpp>\n#include \"messages/status.hpp\"\n// #include \"app/x.hpp\" in a comment\n")
  file(WRITE ${SELF_TEST}/app/main.cpp "#include \"cluster/cluster_command.hpp\"\n#include \"gateway/gateway_command.hpp\"\n#include \"sim/simulate_command.hpp\"\n")
  file(WRITE ${SELF_TEST}/messages/value.hpp "#pragma once\n#include <string>\n#include \"messages/status.hpp\"\n")
  find_upward_includes(${SELF_TEST} arrows files includes)
  set(expected
      "gateway/side.cpp: #include sim/scenario.hpp (gateway/ and sim/ are siblings)"
      "runtime/cli/up.hpp: #include app/cli/command_line.hpp (runtime/ is below app/)"
      "storage/relative.cpp: #include ../app/main.hpp (relative: name it from the source root)")
  list(SORT arrows)
  if(NOT arrows STREQUAL expected)
    string(REPLACE ";" "\n  " got "${arrows}")
    message(FATAL_ERROR "layers self-test: expected the three planted arrows, found:\n  ${got}")
  endif()
  message(STATUS "layers self-test: ${files} files, ${includes} includes, the 3 planted arrows found")
  return()
endif()

if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<source root> -P check_layers.cmake")
endif()
find_upward_includes(${SOURCE_DIR} arrows files includes)
if(arrows)
  list(LENGTH arrows count)
  string(REPLACE ";" "\n  " listed "${arrows}")
  message(FATAL_ERROR "${count} #include line(s) run up the layer order "
                      "(messages < storage < actors < runtime < {gateway, sim, cluster} < app):\n  ${listed}")
endif()
message(STATUS "layers: ${files} files, ${includes} includes, none runs up the layer order")
