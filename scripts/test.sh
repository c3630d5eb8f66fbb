#!/usr/bin/env bash
# Installs whatever is missing and runs every check: type-check, lint, build and the whole test
# suite, which needs ../shared beside the repository. What CI runs (.ci/run). Safe to run again.
set -euo pipefail
source "$(dirname "$0")/setup.sh"

# ffmpeg (sources, test cameras), procps (pgrep in leak checks), mosquitto (the MQTT broker the
# delivery tests start), rtsp-server-perl (an RTSP server for the source tests), nginx with its RTMP
# module (the push target of the live-video tests), chromium (the browser tests, driven by
# playwright-core), fonts for the on-screen labels, openssl (a CA and certificates for the TLS
# cluster test).
need_packages ffmpeg procps ca-certificates openssl mosquitto rtsp-server-perl nginx libnginx-mod-rtmp chromium \
  fonts-dejavu-core fonts-wqy-microhei
test -d ../shared/fixtures || {
  echo "../shared/fixtures is missing beside the repository" >&2
  exit 1
}
need_node_modules
# The NATS server of the cluster tests: at or above the floor, fetched from Debian when missing.
VC_NATS_SERVER="$(bash scripts/nats-server.sh)"
export VC_NATS_SERVER
npm run typecheck
npm run lint
npm run build
touch out/.built
npm test
