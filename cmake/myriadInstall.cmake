# Installation and the package config for find_package(myriad CONFIG): targets myriad::myriad
# (the compiled library's CPU variant + headers), myriad::headers (header-only per-chain code)
# and, from a CUDA build, myriad::cuda (the variant with the CUDA backends; the component
# `cuda`). A CPU-only program links myriad::myriad and needs no CUDA toolkit where it is built.

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
if(TARGET myriad_cuda)
  install(TARGETS myriad_cuda EXPORT myriadCudaTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT myriadCudaTargets NAMESPACE myriad::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/myriadConfig.cmake.in
  ${PROJECT_BINARY_DIR}/myriadConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/myriadConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/myriadConfig.cmake ${PROJECT_BINARY_DIR}/myriadConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/myriad)
