# All dependencies come from Debian packages (see bootstrap.sh) or the CUDA toolkit in /usr/local/cuda.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED)  # Boost.Graph is header-only
find_package(HDF5 REQUIRED COMPONENTS C CXX)
# zlib (zlib1g-dev, which libhdf5-dev already pulls in; HDF5 links it): gzipped traces (predict --trace X.gz).
find_package(ZLIB REQUIRED)
if(MOETWIN_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
# Open MPI (libopenmpi-dev) is optional: without it `moetwin sweep` runs on threads only.
find_package(MPI COMPONENTS C QUIET)
set(MOETWIN_HAVE_MPI ${MPI_C_FOUND})
message(STATUS "moetwin: MPI sweeps ${MOETWIN_HAVE_MPI}")
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)

# TOML++ (libtomlplusplus-dev) is header-only; Debian ships no CMake config for 3.3.
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(moetwin_tomlplusplus INTERFACE)
target_include_directories(moetwin_tomlplusplus SYSTEM INTERFACE ${TOMLPP_INCLUDE_DIR})
add_library(tomlplusplus::tomlplusplus ALIAS moetwin_tomlplusplus)

add_library(moetwin_hdf5 INTERFACE)
target_include_directories(moetwin_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
target_link_libraries(moetwin_hdf5 INTERFACE ${HDF5_CXX_LIBRARIES} ${HDF5_LIBRARIES})
target_compile_definitions(moetwin_hdf5 INTERFACE ${HDF5_DEFINITIONS})
add_library(moetwin::hdf5 ALIAS moetwin_hdf5)

# CUDA is optional: GPU code builds only where nvcc is found; CI has none and must still pass.
set(MOETWIN_HAVE_CUDA OFF)
if(MOETWIN_CUDA AND NOT MOETWIN_SANITIZE)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # CMake 3.25 does not know C++20 for nvcc: CUDA sources are C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 100 103)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # NCCL ships no CMake package: make an imported target.
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
      add_library(moetwin::nccl UNKNOWN IMPORTED)
      set_target_properties(moetwin::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
    endif()
    set(MOETWIN_HAVE_CUDA ON)
  endif()
endif()
message(STATUS "moetwin: CUDA parts ${MOETWIN_HAVE_CUDA}")
