cmake_minimum_required(VERSION 3.21)
# ctest driver: builds tests/consumers/cmake against posenc (MODE = find_package | add_subdirectory)
# in WORK and runs the app.
# find_package links the library this build installed, so it takes this build's flags (the
# sanitizers must match); add_subdirectory compiles posenc itself, as a consumer's own default
# build would (no build type, no sanitizer flags): the check is the CMake integration, and a
# second sanitized debug build of the library would only cost time.
file(REMOVE_RECURSE "${WORK}")
set(configure -S "${POSENC_SOURCE}/tests/consumers/cmake" -B "${WORK}/build" -DCMAKE_CXX_COMPILER=${CXX})
if(MODE STREQUAL "find_package")
  list(APPEND configure "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
       -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
  execute_process(COMMAND ${CMAKE_COMMAND} --install "${POSENC_BUILD}" --prefix "${WORK}/prefix" RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc)
    message(FATAL_ERROR "cmake --install failed")
  endif()
  list(APPEND configure "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
else()
  list(APPEND configure -DPOSENC_VIA_SUBDIRECTORY=ON "-DPOSENC_SOURCE=${POSENC_SOURCE}")
endif()
foreach(step IN ITEMS configure build run)
  if(step STREQUAL "configure")
    execute_process(COMMAND ${CMAKE_COMMAND} ${configure} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  elseif(step STREQUAL "build")
    execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK}/build" -j 2 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  else()
    execute_process(COMMAND "${WORK}/build/app" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  endif()
  if(rc)
    message(FATAL_ERROR "consumer (${MODE}) ${step} failed:\n${out}")
  endif()
endforeach()
message(STATUS "${MODE}: ${out}")
