#!/usr/bin/env bash
# Installs myriad into a temporary prefix and builds and runs examples/custom_model against it
# with find_package(myriad CONFIG), as a user would.
set -euo pipefail
source_dir=$2
build_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples/custom_model" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/custom_model"
