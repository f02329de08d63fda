#!/bin/sh
# Installs (or upgrades) Pintle as a systemd service on a Debian- or RHEL-like host. Run as root from a source
# tree after `mvn -B package`:
#
#   sh deploy/install.sh [path/to/pintle.jar]
#
# It starts nothing: port 443 is Apache's on a Rudder server until you switch (deploy/MIGRATING-FROM-RUDDER.md).
# DESTDIR=/some/dir installs into a staging tree instead (packaging, tests) and skips user creation and systemctl.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
jar=${1:-$here/../server/target/pintle.jar}
root=${DESTDIR:-}
units=$root/etc/systemd/system

if [ ! -f "$jar" ]; then
    echo "install.sh: no jar at $jar; build it with 'mvn -B package' or pass its path" >&2
    exit 1
fi

# The jar is replaced by a rename, never rewritten in place: a running server keeps reading the old file.
install -d -m 0755 "$root/opt/pintle" "$root/opt/pintle/bin"
install -m 0644 "$jar" "$root/opt/pintle/pintle.jar.new"
mv -f "$root/opt/pintle/pintle.jar.new" "$root/opt/pintle/pintle.jar"
install -m 0755 "$here/bin/pintle" "$root/opt/pintle/bin/pintle"
install -m 0644 "$here/README.md" "$root/opt/pintle/README.md"
install -d -m 0755 "$root/usr/local/bin"
ln -sf /opt/pintle/bin/pintle "$root/usr/local/bin/pintle"

install -d -m 0755 "$root/usr/lib/sysusers.d" "$units"
install -m 0644 "$here/sysusers.d/pintle.conf" "$root/usr/lib/sysusers.d/pintle.conf"
install -m 0644 "$here/systemd/pintle.service" "$here/systemd/pintle.socket" "$units/"

if [ -z "$root" ]; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers pintle.conf
    elif ! id pintle >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin pintle
    fi
fi

# The example is refreshed on every install; the live configuration is never overwritten.
install -d -m 0755 "$root/etc/pintle"
install -m 0644 "$here/pintle.example.toml" "$root/etc/pintle/pintle.example.toml"
if [ ! -e "$root/etc/pintle/pintle.toml" ]; then
    install -m 0644 "$here/pintle.example.toml" "$root/etc/pintle/pintle.toml"
    echo "installed /etc/pintle/pintle.toml from the example: review it"
fi

if [ -z "$root" ]; then
    systemctl daemon-reload
    cat <<'NEXT'
Installed. Next:
  pintle check-config --config /etc/pintle/pintle.toml
  first install:  systemctl enable --now pintle.socket pintle.service   (once Apache no longer holds 443)
  upgrade:        systemctl restart pintle.service                      (pintle.socket keeps the port)
NEXT
fi
