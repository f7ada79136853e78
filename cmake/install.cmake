# `cmake --install`: bin/nhens, libnhens (shared and static), include/nhens/*.h, LICENSE, CITATION.cff and
# CHANGELOG.md, the CMake package
# (find_package(nhens) -> nhens::nhens, nhens::nhens_static) and nhens.pc for pkg-config.
include(CMakePackageConfigHelpers)

set_target_properties(nhens PROPERTIES EXPORT_NAME nhens)
set_target_properties(nhens_static PROPERTIES EXPORT_NAME nhens_static)
install(TARGETS nhens nhens_static EXPORT nhensTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS nhens_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/nhens DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CITATION.cff ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(NHENS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nhens)
install(EXPORT nhensTargets NAMESPACE nhens:: DESTINATION ${NHENS_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nhensConfig.cmake.in
  ${CMAKE_BINARY_DIR}/nhensConfig.cmake INSTALL_DESTINATION ${NHENS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/nhensConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/nhensConfig.cmake ${CMAKE_BINARY_DIR}/nhensConfigVersion.cmake
  DESTINATION ${NHENS_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place, so `cmake --install --prefix P` works.
file(RELATIVE_PATH NHENS_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(NHENS_PC_MPI "")
if(NHENS_MPI)
  list(JOIN MPI_C_LIBRARIES " " NHENS_PC_MPI)
endif()
# libnhens.a carries the optimised SUNDIALS (CMakeLists.txt); with Debian's, a static link names it.
if(NHENS_STATIC_BUNDLES_SUNDIALS)
  set(NHENS_PC_SUNDIALS "")
else()
  set(NHENS_PC_SUNDIALS "-lsundials_kinsol -lsundials_cvode -lsundials_sunlinsoldense -lsundials_sunmatrixdense -lsundials_nvecserial")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/nhens.pc.in ${CMAKE_BINARY_DIR}/nhens.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/nhens.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
