#!/bin/sh
# Installs (or upgrades) Pintle by hand, in the same places as the .deb (server/target/pintle_*_all.deb), on a
# systemd host where that package does not install (no dpkg). Where it does, install the package instead: this
# script would write over files dpkg owns. Run as root from a source tree after `mvn -B package`:
#
#   sh deploy/install.sh [path/to/pintle.jar]
#
# It starts nothing: port 443 is Apache's on a Rudder server until you switch (deploy/MIGRATING-FROM-RUDDER.md).
# DESTDIR=/some/dir installs into a staging tree instead (packaging, tests) and skips user creation and systemctl.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
jar=${1:-$here/../server/target/pintle.jar}
root=${DESTDIR:-}

if [ ! -f "$jar" ]; then
    echo "install.sh: no jar at $jar; build it with 'mvn -B package' or pass its path" >&2
    exit 1
fi
if [ -z "$root" ] && command -v dpkg-query >/dev/null 2>&1 && dpkg-query -W pintle >/dev/null 2>&1; then
    echo "install.sh: the pintle package is installed; upgrade it with apt-get install ./pintle_<version>_all.deb" >&2
    exit 1
fi

# The jar is replaced by a rename, never rewritten in place: a running server keeps reading the old file.
install -d -m 0755 "$root/usr/share/pintle" "$root/usr/bin"
install -m 0644 "$jar" "$root/usr/share/pintle/pintle.jar.new"
mv -f "$root/usr/share/pintle/pintle.jar.new" "$root/usr/share/pintle/pintle.jar"
install -m 0755 "$here/bin/pintle" "$root/usr/bin/pintle"
install -d -m 0755 "$root/usr/lib/pintle"
install -m 0755 "$here/lib/pintle-agent-run" "$root/usr/lib/pintle/pintle-agent-run"
install -d -m 0755 "$root/usr/share/doc/pintle"
install -m 0644 "$here/README.md" "$here/MIGRATING-FROM-RUDDER.md" "$here/pintle.example.toml" "$root/usr/share/doc/pintle/"

# Every file of these directories, as the package takes them.
for dir in systemd:/usr/lib/systemd/system sysusers.d:/usr/lib/sysusers.d tmpfiles.d:/usr/lib/tmpfiles.d \
           sudoers.d:/etc/sudoers.d; do
    src=$here/${dir%%:*}
    dst=$root${dir#*:}
    mode=0644
    if [ "${dir%%:*}" = sudoers.d ]; then
        mode=0440   # sudo ignores a drop-in anyone but root may read
    fi
    if [ -d "$src" ]; then
        install -d -m 0755 "$dst"
        for file in "$src"/*; do
            if [ -f "$file" ]; then
                install -m "$mode" "$file" "$dst/"
            fi
        done
    fi
done

if [ -z "$root" ]; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers
    elif ! id pintle >/dev/null 2>&1; then
        useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin pintle
    fi
    if [ -d "$here/tmpfiles.d" ] && command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create
    fi
fi

# The live configuration is never overwritten; the one installed first sets only the agent helper's socket.
install -d -m 0755 "$root/etc/pintle"
if [ ! -e "$root/etc/pintle/pintle.toml" ]; then
    install -m 0644 "$here/pintle.toml" "$root/etc/pintle/pintle.toml"
fi

if [ -z "$root" ]; then
    systemctl daemon-reload
    cat <<'NEXT'
Installed. Next:
  pintle check-config --config /etc/pintle/pintle.toml
  first install:  systemctl enable --now pintle.socket pintle-agent.socket pintle.service   (once Apache no longer holds 443)
  upgrade:        systemctl restart pintle.service                      (pintle.socket keeps the port)
NEXT
fi
