# Runs one documentation program (tests/readme/CMakeLists.txt) in a fresh empty dir: -DPROGRAM=
# the program, -DDIR= its working dir (emptied first). Fails when it exits non-zero.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
execute_process(COMMAND ${PROGRAM} WORKING_DIRECTORY ${DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
