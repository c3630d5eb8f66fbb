# Sourced by start.sh and test.sh: installs what this machine lacks and sets the environment the
# install needs. Safe to run again: each step does nothing when its work is done already.
#   need_packages pkg...   Debian packages, installed (with apt-get) only when missing
#   need_node_modules      npm install, when node_modules is missing or older than the lock file
#   need_build             npm run build, when out/ is missing or older than any source

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

# Binaries npm packages would download from outside the registry, which this machine cannot reach:
# Electron's (not needed to build, test or run headless), onnxruntime-node's GPU providers (it ships
# its CPU binaries) and ffmpeg-static's (Debian's ffmpeg instead).
export ELECTRON_SKIP_BINARY_DOWNLOAD=1
export ONNXRUNTIME_NODE_INSTALL=skip
export DEBIAN_FRONTEND=noninteractive

need_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=''
    [ "$(id -u)" -eq 0 ] || sudo='sudo'
    echo "installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  FFMPEG_BIN="$(command -v ffmpeg || true)"
  export FFMPEG_BIN
}

need_node() {
  local version
  version="$(node --version 2>/dev/null || true)"
  if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
    echo "Node.js 20.19 or later is needed (found: ${version:-none})" >&2
    exit 1
  fi
}

need_node_modules() {
  need_node
  # npm writes node_modules/.package-lock.json on every install: older than the lock, it is stale.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
    [ package.json -nt node_modules/.package-lock.json ]; then
    # `npm install` rather than `npm ci`: the registry mirror lacks some platforms' optional binaries
    # (e.g. @biomejs/cli-win32-x64), which npm ci counts as a lock file out of sync; npm install keeps
    # the locked versions and skips what the mirror does not have.
    npm install --no-audit --no-fund
  fi
}

need_build() {
  local stamp=out/.built
  if [ ! -f "$stamp" ] || [ -n "$(find engine main preload renderer assets package.json package-lock.json \
    electron.vite.config.ts tsconfig.json -newer "$stamp" -print -quit)" ]; then
    npm run build
    touch "$stamp"
  fi
}
