# Cross-compiles the runtime, the Linux port and the runtime-only tests for
# aarch64 Linux with Debian's g++-aarch64-linux-gnu. Tests run through
# qemu-aarch64 (user mode) against the cross sysroot:
#
#   cmake -S . -B build-a64 -DCMAKE_TOOLCHAIN_FILE=ports/linux/aarch64-toolchain.cmake \
#         -DBATON_BUILD_TESTS=ON
#   cmake --build build-a64 -j2 && ctest --test-dir build-a64
#
# The planner is host-only (BATON_BUILD_PLANNER is off when cross-compiling),
# so only tests/runtime_only is built; GoogleTest is compiled from the
# sources Debian ships in /usr/src/googletest.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(BATON_AARCH64_TRIPLE aarch64-linux-gnu CACHE STRING "Cross toolchain prefix")
set(BATON_AARCH64_SYSROOT /usr/${BATON_AARCH64_TRIPLE} CACHE PATH "Cross sysroot (libraries for qemu -L)")

find_program(CMAKE_C_COMPILER ${BATON_AARCH64_TRIPLE}-gcc REQUIRED)
find_program(CMAKE_CXX_COMPILER ${BATON_AARCH64_TRIPLE}-g++ REQUIRED)
set(CMAKE_ASM_COMPILER ${CMAKE_C_COMPILER})

find_program(BATON_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${BATON_QEMU_AARCH64} -L ${BATON_AARCH64_SYSROOT})

set(CMAKE_FIND_ROOT_PATH ${BATON_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
