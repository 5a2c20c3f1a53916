#!/usr/bin/env bash
# Installs myriad into a temporary prefix and builds and runs examples/custom_model against it
# with find_package(myriad CONFIG), as a user would; with a CUDA build, also its nvcc build
# (custom_model_cuda: the model's own CUDA backend, run on a GPU where there is one, else on the
# CPU). The CPU program (myriad::myriad) must need no CUDA library, and build where no CUDA
# toolkit is found, whatever myriad was built with.
set -euo pipefail
source_dir=$2
build_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# The CUDA compiler of myriad's own build (ctest's PATH need not reach it).
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
cmake -S "$source_dir/examples/custom_model" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"} >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/custom_model"
if readelf -d "$work/build/custom_model" | grep -E 'NEEDED.*(cudart|cublas|cusolver)'; then
  echo "custom_model (myriad::myriad) links CUDA libraries"; exit 1
fi
cmake -S "$source_dir/examples/custom_model" -B "$work/build-no-toolkit" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$work/build-no-toolkit" --target custom_model >/dev/null
"$work/build-no-toolkit/custom_model" >/dev/null
if grep -qs 'set(MYRIAD_HAS_CUDA ON)' "$work"/prefix/lib*/cmake/myriad/myriadConfig.cmake; then
  [ -x "$work/build/custom_model_cuda" ] || { echo "custom_model_cuda was not built"; exit 1; }
  "$work/build/custom_model_cuda"
fi
