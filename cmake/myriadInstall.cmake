# Installation and the package config for find_package(myriad CONFIG): targets myriad::myriad
# (compiled library + headers) and myriad::headers (header-only per-chain code).

include(CMakePackageConfigHelpers)

install(TARGETS myriad myriad_headers myriad_random123
  EXPORT myriadTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/myriad DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The kernel templates, so that user code compiled with nvcc can run its own models on CUDA.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/myriad/kernels
  FILES_MATCHING PATTERN "*.cuh")

install(EXPORT myriadTargets NAMESPACE myriad:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/myriadConfig.cmake.in
  ${PROJECT_BINARY_DIR}/myriadConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/myriadConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/myriadConfig.cmake ${PROJECT_BINARY_DIR}/myriadConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
