#!/usr/bin/env bash
# Prints the path of a NATS server binary at or above the cluster's floor (engine/cluster/server-floor.ts),
# fetching Debian trixie's package when the machine has none: `apt-get download` under a scratch apt
# configuration (the machine's own sources stay as they are) and `dpkg-deb -x` into a cache folder.
# Debian bookworm's own nats-server (2.9.10) is below the floor: its compare-and-set lets two racing
# writers both win. Usage: bash scripts/nats-server.sh   (prints the binary's path)
set -euo pipefail
FLOOR=2.10.27
SUITE=${VC_NATS_SUITE:-trixie}
CACHE=${VC_NATS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vision-console/nats-server}

at_floor() { # version-of-binary >= FLOOR
  local version
  version=$("$1" --version 2>/dev/null | sed -n 's/.*v\([0-9][0-9.]*\).*/\1/p')
  [ -n "$version" ] && [ "$(printf '%s\n%s\n' "$FLOOR" "$version" | sort -V | head -1)" = "$FLOOR" ]
}

for candidate in "${VC_NATS_SERVER:-}" "$(command -v nats-server || true)" "$CACHE/bin/nats-server"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && at_floor "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/sources" "$scratch/prefs"
touch "$scratch/status"
cat >"$scratch/sources/$SUITE.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: $SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$scratch/sources"
  -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$scratch/prefs"
  -o "Dir::State::Lists=$scratch/lists" -o "Dir::State::status=$scratch/status"
  -o "Dir::Cache=$scratch/cache" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$scratch" && apt-get "${apt_opts[@]}" -qq download nats-server >&2)
dpkg-deb -x "$scratch"/nats-server_*.deb "$scratch/root"
mkdir -p "$CACHE/bin"
install -m 0755 "$scratch/root/usr/sbin/nats-server" "$CACHE/bin/nats-server.new"
mv "$CACHE/bin/nats-server.new" "$CACHE/bin/nats-server"
if ! at_floor "$CACHE/bin/nats-server"; then
  echo "Debian $SUITE's nats-server is below $FLOOR: $("$CACHE/bin/nats-server" --version)" >&2
  exit 1
fi
echo "$CACHE/bin/nats-server"
