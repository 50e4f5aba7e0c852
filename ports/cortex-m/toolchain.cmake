# Toolchain file for Arm Cortex-M with the GNU Arm Embedded toolchain
# (arm-none-eabi-gcc, newlib-nano).
#
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=ports/cortex-m/toolchain.cmake \
#         [-DBATON_CORTEX_M_CPU=cortex-m55] [-DBATON_HOST_TOOL=/path/to/baton]
#
# BATON_CORTEX_M_CPU selects the core: cortex-m3 (QEMU mps2-an385, soft float),
# cortex-m4 (QEMU mps2-an386, hard float on the single-precision FPv4-SP) or
# cortex-m55 (QEMU mps3-an547, hard float with the FPU/MVE enabled).
# The planner and the tests are off when cross-compiling (top-level CMake).

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
# Compiler checks link a static library instead of an executable: a bare-metal
# executable needs a linker script and startup code the checks do not have.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(BATON_CORTEX_M_CPU "cortex-m3" CACHE STRING "Cortex-M core: cortex-m3, cortex-m4 or cortex-m55")
set_property(CACHE BATON_CORTEX_M_CPU PROPERTY STRINGS cortex-m3 cortex-m4 cortex-m55)
# try_compile projects re-read this file: pass the choice on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BATON_CORTEX_M_CPU)

set(_baton_prefix arm-none-eabi-)
find_program(CMAKE_C_COMPILER ${_baton_prefix}gcc REQUIRED)
find_program(CMAKE_CXX_COMPILER ${_baton_prefix}g++ REQUIRED)
set(CMAKE_ASM_COMPILER ${CMAKE_C_COMPILER})
find_program(CMAKE_AR ${_baton_prefix}ar REQUIRED)
find_program(CMAKE_RANLIB ${_baton_prefix}ranlib REQUIRED)
find_program(CMAKE_NM ${_baton_prefix}nm REQUIRED)
find_program(CMAKE_OBJCOPY ${_baton_prefix}objcopy REQUIRED)
find_program(CMAKE_SIZE ${_baton_prefix}size REQUIRED)

if(BATON_CORTEX_M_CPU STREQUAL "cortex-m3")
  set(_baton_arch_flags "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft")
elseif(BATON_CORTEX_M_CPU STREQUAL "cortex-m4")
  # FPv4-SP: float32 in hardware, double in libgcc (-Wdouble-promotion keeps
  # doubles out of the kernels).
  set(_baton_arch_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
elseif(BATON_CORTEX_M_CPU STREQUAL "cortex-m55")
  # -mfpu=auto takes the FPU (and MVE) implied by -mcpu.
  set(_baton_arch_flags "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=auto")
else()
  message(FATAL_ERROR "BATON_CORTEX_M_CPU must be cortex-m3, cortex-m4 or cortex-m55, not '${BATON_CORTEX_M_CPU}'")
endif()

set(_baton_common "${_baton_arch_flags} -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_baton_common}")
set(CMAKE_CXX_FLAGS_INIT
    "${_baton_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "${_baton_arch_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_baton_arch_flags} --specs=nano.specs -Wl,--gc-sections")

# Size first. The default build type is MinSizeRel (the top-level default is
# Release, under which runtime/CMakeLists.txt adds -O3 to the kernels).
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE MinSizeRel CACHE STRING "Build type (MinSizeRel: -Os everywhere)")
endif()
# Release and MinSizeRel both start from -Os. (CMake appends its
# own -O3 to the *_INIT variables, so the cache entries are seeded instead.)
foreach(_lang C CXX ASM)
  set(CMAKE_${_lang}_FLAGS_RELEASE "-Os -DNDEBUG" CACHE STRING "Flags for Release builds")
  set(CMAKE_${_lang}_FLAGS_MINSIZEREL "-Os -DNDEBUG" CACHE STRING "Flags for MinSizeRel builds")
endforeach()

# Libraries and headers come from the toolchain's sysroot only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)
set(CMAKE_EXECUTABLE_SUFFIX_ASM .elf)
