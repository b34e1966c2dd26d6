#!/usr/bin/env bash
# Builds the Debian packages libpam-mpin and mpin-server from the release products in
# .build/release and pam_mpin.so in .build/pam (`make deb` builds them first), with Debian's own tools: a staging tree per
# package as debhelper lays it out (OUT/debian/PACKAGE), dpkg-shlibdeps for the library
# dependencies, dpkg-gencontrol for DEBIAN/control (version from debian/changelog,
# Installed-Size), dpkg-deb --build --root-owner-group for the archive.
#   VERSION=0.1.0 DEB_REVISION=1 bash packaging/build-deb.sh [OUT]     (OUT: .build/deb)
# The packaging sources are in packaging/debian/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC="$ROOT/packaging/debian"
BIN="$ROOT/.build/release"
OUT=$(mkdir -p "${1:-$ROOT/.build/deb}" && cd "${1:-$ROOT/.build/deb}" && pwd)
: "${VERSION:?VERSION must be set (the Makefile reads it from MPinSDK.version)}"
DEB_VERSION="$VERSION-${DEB_REVISION:-1}"
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# Where Debian 12's libpam-modules keeps pam_unix.so (/lib/<multiarch>/security).
PAMDIR="lib/$MULTIARCH/security"

MODULE_SO="$ROOT/.build/pam/pam_mpin.so"
for f in "$MODULE_SO" "$BIN/mpin-pam-helper" "$BIN/mpinctl" "$BIN/mpin-server"; do
  [ -f "$f" ] || { echo "build-deb: $f is missing (make deb builds it)" >&2; exit 1; }
done
# The package version and what the programs say must agree (a stale NOBUILD product would not).
said=$("$BIN/mpinctl" version)
[ "$said" = "mpinctl $VERSION" ] || { echo "build-deb: mpinctl version says '$said', the package is $VERSION" >&2; exit 1; }

umask 022
rm -rf "$OUT/debian" "$OUT"/*.deb
mkdir -p "$OUT/debian"
cd "$OUT"   # dpkg-shlibdeps and dpkg-gencontrol read debian/control and debian/changelog here
cp "$SRC/control" debian/control
sed "s/@DEB_VERSION@/$DEB_VERSION/" "$SRC/changelog.in" > debian/changelog

# common PACKAGE: the documentation every package carries; the maintainer scripts.
common() {
  local pkg=$1 root="debian/$1"
  install -d -m 0755 "$root/DEBIAN" "$root/usr/share/doc/$pkg"
  install -m 0644 "$SRC/copyright" "$root/usr/share/doc/$pkg/copyright"
  gzip -9n < debian/changelog > "$root/usr/share/doc/$pkg/changelog.Debian.gz"
  chmod 0644 "$root/usr/share/doc/$pkg/changelog.Debian.gz"
  for s in postinst prerm postrm; do
    [ -f "$SRC/$pkg.$s" ] && install -m 0755 "$SRC/$pkg.$s" "$root/DEBIAN/$s"
  done
  [ -f "$SRC/$pkg.conffiles" ] && install -m 0644 "$SRC/$pkg.conffiles" "$root/DEBIAN/conffiles"
  return 0
}
# manpages PACKAGE SECTION PAGE...: gzip -9n into usr/share/man/manSECTION.
manpages() {
  local root="debian/$1" sec=$2; shift 2
  install -d -m 0755 "$root/usr/share/man/man$sec"
  for page in "$@"; do
    gzip -9n < "$ROOT/man/$page" > "$root/usr/share/man/man$sec/$page.gz"
    chmod 0644 "$root/usr/share/man/man$sec/$page.gz"
  done
}
# strip_exe FILE / strip_lib FILE: as dh_strip does (no debug symbols, no .comment/.note).
strip_exe() { strip --remove-section=.comment --remove-section=.note "$1"; }
strip_lib() { strip --remove-section=.comment --remove-section=.note --strip-unneeded "$1"; }
# finish PACKAGE BINARY...: dependencies, md5sums (conffiles excluded), control, archive.
finish() {
  local pkg=$1 root="debian/$1"; shift
  : > "debian/$pkg.substvars"
  dpkg-shlibdeps -T"debian/$pkg.substvars" "${@/#/-e$root/}"
  echo "misc:Depends=" >> "debian/$pkg.substvars"
  (cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | LC_ALL=C sort \
     | grep -vxF -f <(sed 's|^/||' DEBIAN/conffiles 2>/dev/null || true) \
     | xargs -r -d '\n' md5sum > DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/md5sums"
  dpkg-gencontrol -p"$pkg" -P"$root" -T"debian/$pkg.substvars"
  dpkg-deb --build --root-owner-group -Zgzip "$root" "$OUT"
}

# --- libpam-mpin ----------------------------------------------------------------------------
P=debian/libpam-mpin
common libpam-mpin
install -d -m 0755 "$P/$PAMDIR" "$P/usr/libexec/mpin" "$P/usr/sbin" "$P/usr/bin" "$P/etc/mpin" "$P/usr/share/pam-configs"
install -m 0644 "$MODULE_SO" "$P/$PAMDIR/pam_mpin.so"
strip_lib "$P/$PAMDIR/pam_mpin.so"
# Where pam_mpin.so runs it from (compiled in: make's HELPERDIR).
install -m 0755 "$BIN/mpin-pam-helper" "$P/usr/libexec/mpin/mpin-pam-helper"
strip_exe "$P/usr/libexec/mpin/mpin-pam-helper"
install -m 0755 "$BIN/mpinctl" "$P/usr/sbin/mpinctl"
strip_exe "$P/usr/sbin/mpinctl"
# mpin is the same program run by that name (Sources/mpinctl/main.swift): one static Swift
# runtime in the package instead of two (docs/PERFORMANCE.md §2.6).
ln -s ../sbin/mpinctl "$P/usr/bin/mpin"
install -m 0644 "$ROOT/Config/mpin.conf" "$P/etc/mpin/mpin.conf"
install -m 0644 "$ROOT/pam/pam-auth-update/mpin" "$P/usr/share/pam-configs/mpin"
# The resident helper's units (the service's ExecStart is the path above); postinst enables the
# socket.
install -d -m 0755 "$P/lib/systemd/system"
install -m 0644 "$ROOT/Config/mpin-pam-helper.socket" "$ROOT/Config/mpin-pam-helper.service" "$P/lib/systemd/system/"
# The SELinux policy module (packaging/selinux), compiled with selinux-policy-dev's Makefile for
# the reference policy; not loaded by the package: `semodule -i /usr/share/selinux/packages/mpin.pp`.
SELINUX_DEVEL=/usr/share/selinux/devel/Makefile
[ -f "$SELINUX_DEVEL" ] || { echo "build-deb: $SELINUX_DEVEL is missing (apt-get install selinux-policy-dev)" >&2; exit 1; }
SELINUX_BUILD="$OUT/selinux"
rm -rf "$SELINUX_BUILD" && mkdir -p "$SELINUX_BUILD"
cp "$ROOT/packaging/selinux/mpin.te" "$ROOT/packaging/selinux/mpin.fc" "$ROOT/packaging/selinux/mpin.if" "$SELINUX_BUILD/"
make -s -C "$SELINUX_BUILD" -f "$SELINUX_DEVEL" mpin.pp >/dev/null \
  || { echo "build-deb: the SELinux module did not compile" >&2; exit 1; }
install -d -m 0755 "$P/usr/share/selinux/packages"
install -m 0644 "$SELINUX_BUILD/mpin.pp" "$P/usr/share/selinux/packages/mpin.pp"
rm -rf "$SELINUX_BUILD"
manpages libpam-mpin 1 mpin.1
manpages libpam-mpin 5 mpin.conf.5
manpages libpam-mpin 8 pam_mpin.8 mpinctl.8
finish libpam-mpin "$PAMDIR/pam_mpin.so" usr/libexec/mpin/mpin-pam-helper usr/sbin/mpinctl

# --- mpin-server ----------------------------------------------------------------------------
P=debian/mpin-server
common mpin-server
install -d -m 0755 "$P/usr/bin" "$P/lib/systemd/system"
install -m 0755 "$BIN/mpin-server" "$P/usr/bin/mpin-server"
strip_exe "$P/usr/bin/mpin-server"
# The unit as in Config/, with the packaged binary and a header that says what the package did.
{
  echo "# systemd unit for mpin-server, installed by the mpin-server package, which created the"
  echo "# system user mpin-server and /var/lib/mpin-server (0700). Not enabled. Before the first start:"
  echo "#   runuser -u mpin-server -- mpin-server init --data /var/lib/mpin-server/data --self-signed HOST"
  echo "#   systemctl enable --now mpin-server"
  echo "# Changes belong in a drop-in (systemctl edit mpin-server), not in this file."
  sed -e '1,/^\[Unit\]/{/^#/d}' -e 's|^ExecStart=/usr/local/bin/mpin-server |ExecStart=/usr/bin/mpin-server |' "$ROOT/Config/mpin-server.service"
} > "$P/lib/systemd/system/mpin-server.service"
chmod 0644 "$P/lib/systemd/system/mpin-server.service"
grep -q '^ExecStart=/usr/bin/mpin-server serve ' "$P/lib/systemd/system/mpin-server.service" \
  || { echo "build-deb: the unit's ExecStart was not rewritten to /usr/bin/mpin-server" >&2; exit 1; }
manpages mpin-server 8 mpin-server.8
finish mpin-server usr/bin/mpin-server

ls -l "$OUT"/*.deb
