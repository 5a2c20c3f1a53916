# Third-party dependencies. Random123 is header-only (Debian: librandom123-dev); its headers
# warn, so they are included as SYSTEM. OpenMP drives the CPU backend.

find_path(RANDOM123_INCLUDE_DIR Random123/philox.h
  HINTS ${RANDOM123_ROOT} ENV RANDOM123_ROOT
  PATH_SUFFIXES include)
if(NOT RANDOM123_INCLUDE_DIR)
  message(FATAL_ERROR "myriad: Random123 headers not found (install librandom123-dev or set RANDOM123_ROOT)")
endif()
if(NOT TARGET myriad_random123)
  add_library(myriad_random123 INTERFACE)
  set_target_properties(myriad_random123 PROPERTIES EXPORT_NAME random123)
  target_include_directories(myriad_random123 SYSTEM INTERFACE
    $<BUILD_INTERFACE:${RANDOM123_INCLUDE_DIR}>)
endif()

# cereal serialises a run's checkpoint (src/run/run_hmc.cpp); header-only and private to the
# compiled library (Debian: libcereal-dev).
find_path(CEREAL_INCLUDE_DIR cereal/archives/binary.hpp HINTS ${CEREAL_ROOT} ENV CEREAL_ROOT
  PATH_SUFFIXES include)
if(NOT CEREAL_INCLUDE_DIR)
  message(FATAL_ERROR "myriad: cereal headers not found (install libcereal-dev or set CEREAL_ROOT)")
endif()

find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)
