# What `cmake --install BUILD [--prefix P]` installs (issue 22 item 1), and the .deb
# (`cpack -G DEB` in BUILD). Layout, under the prefix:
#   bin/sonde, bin/sonde-mpi                 the CLI (sonde-mpi when MPI was found)
#   LIBDIR/sonde/libsonde.so, libsonde_mpi.so the runtime, preloaded by path (sonde run
#                                            finds it from its own place: SD_REL_PKGLIBDIR)
#   LIBDIR/sonde/libsonde_caliper.so         Caliper's annotation API (sonde run --caliper)
#   include/sonde.h, sonde.hpp, sonde.f90    the annotation API
#   include/sonde/sonde.mod, LIBDIR/libsonde_fortran.a   the Fortran binding, when built
#   LIBDIR/pkgconfig/sonde.pc, sonde-fortran.pc          pkg-config
#   LIBDIR/cmake/sonde/sondeConfig.cmake     find_package(sonde): sonde::api, sonde::fortran
#   share/bash-completion/completions/sonde  bash completion
#   share/man/man1/sonde.1, sonde-*.1        the manual, from the commands' --help
#   share/doc/sonde/                         README.md and docs/*.md
include(GNUInstallDirs)
set(SD_PKGLIBDIR ${CMAKE_INSTALL_LIBDIR}/sonde)
set(SD_FMODDIR ${CMAKE_INSTALL_INCLUDEDIR}/sonde)

install(TARGETS sonde LIBRARY DESTINATION ${SD_PKGLIBDIR} COMPONENT runtime)
if(TARGET sonde_mpi)
  install(TARGETS sonde_mpi LIBRARY DESTINATION ${SD_PKGLIBDIR} COMPONENT runtime)
endif()
install(TARGETS sonde_caliper LIBRARY DESTINATION ${SD_PKGLIBDIR} COMPONENT runtime)
install(TARGETS sonde_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
if(TARGET sonde_mpi_cli)
  install(TARGETS sonde_mpi_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()
install(FILES ${CMAKE_SOURCE_DIR}/include/sonde.h ${CMAKE_SOURCE_DIR}/include/sonde.hpp
              ${CMAKE_SOURCE_DIR}/include/sonde.f90
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
# pkg-config files find the prefix from their own place (${pcfiledir}): relocatable
file(RELATIVE_PATH SD_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
set(SD_PC_FILES ${CMAKE_BINARY_DIR}/sonde.pc)
configure_file(${CMAKE_SOURCE_DIR}/cmake/sonde.pc.in ${CMAKE_BINARY_DIR}/sonde.pc @ONLY)
if(TARGET sonde_fortran)
  install(TARGETS sonde_fortran ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  get_target_property(sd_fmod sonde_fortran Fortran_MODULE_DIRECTORY)
  install(FILES ${sd_fmod}/sonde.mod DESTINATION ${SD_FMODDIR} COMPONENT dev)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/sonde-fortran.pc.in ${CMAKE_BINARY_DIR}/sonde-fortran.pc
                 @ONLY)
  list(APPEND SD_PC_FILES ${CMAKE_BINARY_DIR}/sonde-fortran.pc)
endif()
install(FILES ${SD_PC_FILES} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# the package's config finds the prefix from its own place, wherever it is installed
file(RELATIVE_PATH SD_CONFIG_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/cmake/sonde /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/sondeConfig.cmake.in
               ${CMAKE_BINARY_DIR}/sondeConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/sondeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/sondeConfig.cmake ${CMAKE_BINARY_DIR}/sondeConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sonde COMPONENT dev)

install(FILES ${CMAKE_SOURCE_DIR}/cmake/sonde.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME sonde
        COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/ENV.md
              ${CMAKE_SOURCE_DIR}/docs/FORMAT.md ${CMAKE_SOURCE_DIR}/docs/REPORT.md
              ${CMAKE_SOURCE_DIR}/docs/API.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# The manual: one page per command, made from its --help by cmake/man.sh
set(SD_MAN_PAGES sonde sonde-run sonde-report sonde-diff sonde-dump sonde-events)
set(SD_MAN_FILES)
foreach(m ${SD_MAN_PAGES})
  list(APPEND SD_MAN_FILES ${CMAKE_BINARY_DIR}/man/${m}.1)
endforeach()
add_custom_command(OUTPUT ${SD_MAN_FILES}
  COMMAND bash ${CMAKE_SOURCE_DIR}/cmake/man.sh $<TARGET_FILE:sonde_cli> ${CMAKE_BINARY_DIR}/man
          ${PROJECT_VERSION}
  DEPENDS sonde_cli ${CMAKE_SOURCE_DIR}/cmake/man.sh VERBATIM)
add_custom_target(sonde_man ALL DEPENDS ${SD_MAN_FILES})
install(FILES ${SD_MAN_FILES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)

# `cpack -G DEB` in the build tree: sonde_VERSION_ARCH.deb, every component
set(CPACK_PACKAGE_NAME sonde)
set(CPACK_PACKAGE_VENDOR "sonde")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "sampling profiler for C, C++ and Fortran programs, with context in every sample")
set(CPACK_PACKAGE_CONTACT "sonde developers <sonde@localhost>")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libunwind8, libmsgpackc2, libdw1, libelf1, zlib1g")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpapi7.0 | libpapi6.0, libpfm4, libopenmpi3")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
