#!/usr/bin/env bash
# Installs whatever is missing and starts the product: the headless engine with the web console on
# http://127.0.0.1:8080 (data in ./.data) unless its arguments say otherwise, the built-in package and the example detection package
# installed, and ../shared/fixtures/media as a media folder. Arguments go to the engine (npm run engine -- --help lists them). Safe to run again.
set -euo pipefail
source "$(dirname "$0")/setup.sh"

# ffmpeg decodes the sources, fonts draw the on-screen labels (Latin and Chinese class names).
need_packages ffmpeg ca-certificates fonts-dejavu-core fonts-wqy-microhei
need_node_modules
need_build

# The example package for the COCO detection model beside the repository (../shared/fixtures).
example=out/examples/coco-yolox-nano.zapk
install=()
if [ -f ../shared/fixtures/models/yolox_nano.onnx ]; then
  if [ ! -f "$example" ] || [ examples/coco-yolox-nano/manifest.json -nt "$example" ]; then
    mkdir -p out/examples
    npm run --silent zapk -- build --manifest examples/coco-yolox-nano/manifest.json --out "$example"
  fi
  install=(--install "$example")
else
  echo "../shared/fixtures is not beside the repository: starting without the example package" >&2
fi

# The engine prints where it listens, its data folder and, on a first start without
# VC_ADMIN_PASSWORD, the file with the admin password, as it really is (with the arguments given).
# File sources come from the media folders only: the fixture clips beside the repository, when there.
media=()
if [ -d ../shared/fixtures/media ]; then media=(--media-dir ../shared/fixtures/media); fi
exec node out/main/engine.js "${install[@]}" "${media[@]}" "$@"
