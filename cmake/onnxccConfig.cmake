# onnxccConfig.cmake: the CMake package of onnxcc, installed by `make
# install` into PREFIX/lib/cmake/onnxcc (docs/build-integration.md).
#
#   find_package(onnxcc 0.9 REQUIRED)
#   add_executable(app main.c)
#   onnxcc_add_model(app ${CMAKE_CURRENT_SOURCE_DIR}/net.onnx NAME net ARGS --cpu generic)
#
# gives
#   onnxcc::onnxcc      the compiler, an imported executable found relative
#                       to this file (PREFIX/bin/onnxcc), so the installed
#                       tree can move
#   onnxcc_EXECUTABLE   its path
#   onnxcc_add_model(TARGET MODEL [NAME prefix] [ARGS arg...] [DEPENDS file...])
#       compiles MODEL (relative paths: to the current source directory) at
#       build time into ${CMAKE_CURRENT_BINARY_DIR}/onnxcc/<prefix>/:
#       <prefix>.c, <prefix>.h and <prefix>_weights.c, adds the two .c files
#       to TARGET and that directory to its include path (so
#       `#include "<prefix>.h"`), links libm. The files are made again when
#       MODEL, onnxcc or a DEPENDS file (say a --const FILE) changes.
#       NAME is the C prefix of the generated API (default: MODEL's base
#       name as a C identifier). ARGS are more onnxcc options; --cpu NAME
#       also compiles the generated files with that target's flags (onnxcc
#       --print-cflags, less -O2 and -std, for GCC and clang). The weights:
#       by default embedded (--weights embed), through
#       <prefix>_weights.c.bin (--weights array: <prefix>_weights.inc) beside
#       <prefix>_weights.c when there are more than 4 KB; these are written
#       by the same command as <prefix>_weights.c but not declared as its
#       outputs (a small model has none), only cleaned. With
#       ARGS --weights external the blob <prefix>_weights.bin is an output
#       that the application loads and passes to <prefix>_init. Call it in
#       the directory that defines TARGET.
cmake_policy(PUSH)
cmake_policy(VERSION 3.16)

get_filename_component(_onnxcc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET onnxcc::onnxcc)
  add_executable(onnxcc::onnxcc IMPORTED)
  set_target_properties(onnxcc::onnxcc PROPERTIES IMPORTED_LOCATION "${_onnxcc_prefix}/bin/onnxcc")
endif()
get_target_property(onnxcc_EXECUTABLE onnxcc::onnxcc IMPORTED_LOCATION)
unset(_onnxcc_prefix)
if(NOT EXISTS "${onnxcc_EXECUTABLE}")
  set(onnxcc_FOUND FALSE)
  set(onnxcc_NOT_FOUND_MESSAGE "onnxcc: ${onnxcc_EXECUTABLE} is missing")
  cmake_policy(POP)
  return()
endif()

function(onnxcc_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 _ox "" "NAME" "ARGS;DEPENDS")
  if(_ox_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "onnxcc_add_model: unexpected arguments '${_ox_UNPARSED_ARGUMENTS}' "
                        "(onnxcc_add_model(TARGET MODEL [NAME prefix] [ARGS ...] [DEPENDS ...]))")
  endif()
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "onnxcc_add_model: '${target}' is not a target")
  endif()
  get_filename_component(model "${model}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(name "${_ox_NAME}")
  if(name STREQUAL "")
    get_filename_component(name "${model}" NAME_WE)
    string(MAKE_C_IDENTIFIER "${name}" name)
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "onnxcc_add_model: NAME '${name}' is not a C identifier")
  endif()

  # the options that decide what is written, and those that are ours
  set(weights embed)
  set(cpu "")
  set(prev "")
  foreach(a IN LISTS _ox_ARGS)
    if(prev STREQUAL "--weights")
      set(weights "${a}")
    elseif(prev STREQUAL "--cpu")
      set(cpu "${a}")
    elseif(a MATCHES "^--weights=(.*)$")
      set(weights "${CMAKE_MATCH_1}")
    elseif(a MATCHES "^--cpu=(.*)$")
      set(cpu "${CMAKE_MATCH_1}")
    elseif(a MATCHES "^(-o|--name|--main|--build|--dump-ir.*|--print-cflags|--version|-h|--help)$")
      message(FATAL_ERROR "onnxcc_add_model: ARGS may not have ${a} (onnxcc_add_model sets the output and NAME)")
    endif()
    set(prev "${a}")
  endforeach()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/onnxcc/${name}")
  set(outputs "${dir}/${name}.c" "${dir}/${name}.h" "${dir}/${name}_weights.c")
  set(side "")
  if(weights STREQUAL "external")
    list(APPEND outputs "${dir}/${name}_weights.bin")
  elseif(weights STREQUAL "embed")
    set(side "${dir}/${name}_weights.c.bin")
  elseif(weights STREQUAL "array")
    set(side "${dir}/${name}_weights.inc")
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND onnxcc::onnxcc "${model}" -o "${dir}/${name}.c" --name "${name}" ${_ox_ARGS}
    DEPENDS "${model}" "${onnxcc_EXECUTABLE}" ${_ox_DEPENDS}
    COMMENT "onnxcc: compiling ${model} into ${dir}/${name}.c"
    VERBATIM)
  set(sources "${dir}/${name}.c" "${dir}/${name}_weights.c")
  target_sources("${target}" PRIVATE ${sources} "${dir}/${name}.h")
  target_include_directories("${target}" PRIVATE "${dir}")
  if(side)
    set_property(TARGET "${target}" APPEND PROPERTY ADDITIONAL_CLEAN_FILES ${side})
  endif()
  if(UNIX)
    target_link_libraries("${target}" PRIVATE m)
  endif()

  # --cpu: the target's flags (-march=...) on the generated files
  if(NOT cpu STREQUAL "" AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    execute_process(COMMAND "${onnxcc_EXECUTABLE}" --print-cflags --cpu "${cpu}"
                    OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_VARIABLE err
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "onnxcc_add_model: --cpu ${cpu}: ${err}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    list(FILTER flags EXCLUDE REGEX "^-(O.*|std=.*)$")
    if(flags)
      set_property(SOURCE ${sources} APPEND PROPERTY COMPILE_OPTIONS ${flags})
    endif()
  endif()
endfunction()

cmake_policy(POP)
