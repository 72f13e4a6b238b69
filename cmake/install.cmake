# `cmake --install`: the public headers (include/luda/ and nothing else of the tree),
# libluda.a and libluda.so, the `luda` command, the Lua module luda.so where a stock
# lua5.4 looks for it, a CMake package (find_package(luda): luda::luda, luda::luda_static)
# and a pkg-config file (luda.pc). tests/install/ checks each of them from a host's side.
include(CMakePackageConfigHelpers)

# Debian's lua5.4 searches <prefix>/lib/lua/5.4/ for /usr/local and /usr, and
# /usr/lib/<multiarch>/lua/5.4/ (pkg-config's INSTALL_CMOD), which is where GNUInstallDirs'
# libdir puts it for the prefix /usr.
set(LUDA_LUA_CMOD_DIR ${CMAKE_INSTALL_LIBDIR}/lua/5.4 CACHE STRING
  "Where `cmake --install` puts the Lua module luda.so: relative to the prefix, or absolute")
set(LUDA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/luda)

install(DIRECTORY include/luda DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS luda_static luda_shared EXPORT ludaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS luda_module LIBRARY DESTINATION ${LUDA_LUA_CMOD_DIR})
if(LUDA_BUILD_CLI)
  install(TARGETS luda_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The Jupyter kernel, and its kernelspec naming the installed program (what
# `luda-kernel install --prefix` writes), where Jupyter finds kernels under the prefix.
if(TARGET luda_kernel)
  install(TARGETS luda_kernel RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  file(WRITE ${PROJECT_BINARY_DIR}/kernelspec/kernel.json
    "{\n  \"argv\": [\"${CMAKE_INSTALL_FULL_BINDIR}/luda-kernel\", \"-f\", \"{connection_file}\"],\n"
    "  \"display_name\": \"luda (Lua)\",\n  \"language\": \"lua\",\n  \"interrupt_mode\": \"signal\"\n}\n")
  install(FILES ${PROJECT_BINARY_DIR}/kernelspec/kernel.json DESTINATION ${CMAKE_INSTALL_DATADIR}/jupyter/kernels/luda)
endif()
# luda's MPI plugin beside libluda. runtime/dist/open_plugin.cpp also looks for it from the `luda`
# command's folder and from luda.so's, through these relative paths.
if(TARGET luda_mpi)
  install(TARGETS luda_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(IS_ABSOLUTE "${LUDA_LUA_CMOD_DIR}")
  set(luda_cmod_full "${LUDA_LUA_CMOD_DIR}")
else()
  set(luda_cmod_full "${CMAKE_INSTALL_PREFIX}/${LUDA_LUA_CMOD_DIR}")
endif()
file(RELATIVE_PATH luda_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH luda_cmod_to_lib ${luda_cmod_full} ${CMAKE_INSTALL_FULL_LIBDIR})
set_property(SOURCE ${PROJECT_SOURCE_DIR}/runtime/dist/open_plugin.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  LUDA_BIN_TO_LIBDIR="${luda_bin_to_lib}" LUDA_CMOD_TO_LIBDIR="${luda_cmod_to_lib}")
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# CMake package.
install(EXPORT ludaTargets NAMESPACE luda:: DESTINATION ${LUDA_CMAKE_DIR})
configure_package_config_file(cmake/ludaConfig.cmake.in ${PROJECT_BINARY_DIR}/ludaConfig.cmake
  INSTALL_DESTINATION ${LUDA_CMAKE_DIR})
# Before 1.0 a minor version may break the API: 0.1.x satisfies find_package(luda 0.1).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ludaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ludaConfig.cmake ${PROJECT_BINARY_DIR}/ludaConfigVersion.cmake
  DESTINATION ${LUDA_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so that `cmake --install --prefix` anywhere
# gives a working file.
file(RELATIVE_PATH LUDA_PC_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" LUDA_PC_PREFIX "${LUDA_PC_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(LUDA_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(LUDA_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(cmake/luda.pc.in ${PROJECT_BINARY_DIR}/luda.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/luda.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
