#!/usr/bin/env bash
# `make install DESTDIR=...` into a temporary root: every file where the README says, stripped
# where it should be, and no program that needs the Swift toolchain's libraries at run time
# (they would break when the toolchain moves). Run by `make test-install`, after test-deb,
# whose statically linked builds it reuses.
# README recipe covered here: "Install" from the tree (sudo make install): every path it names.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
DEST="$WORK/root"
# The Makefile's PAMDIR.
PAMDIR="/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/security"
make -C "$ROOT" install DESTDIR="$DEST" >"$WORK/install.log" 2>&1
check "make install DESTDIR=... succeeds" [ "$?" -eq 0 ] || tail -20 "$WORK/install.log"

mode_owner() { stat -c '%a %U' "$1" 2>/dev/null; }
check "pam_mpin.so: $PAMDIR, 644 root" [ "$(mode_owner "$DEST$PAMDIR/pam_mpin.so")" = "644 root" ]
check "mpin-pam-helper: /usr/libexec/mpin, 755 root" [ "$(mode_owner "$DEST/usr/libexec/mpin/mpin-pam-helper")" = "755 root" ]
check "mpinctl, mpin-server: 755 root" \
  [ "$(for f in sbin/mpinctl bin/mpin-server; do mode_owner "$DEST/usr/local/$f"; done | sort -u)" = "755 root" ]
check "mpin is a link to mpinctl, as in the package" [ "$(readlink "$DEST/usr/local/bin/mpin")" = ../sbin/mpinctl ]
check "the installed mpin runs as mpin" grep -q "Approve logins from your own device" <<<"$("$DEST/usr/local/bin/mpin" --help 2>&1)"
check "the store: 700 root" [ "$(mode_owner "$DEST/var/lib/mpin")" = "700 root" ]
check "mpin.conf and the five manual pages are installed" \
  test -f "$DEST/etc/mpin/mpin.conf" -a -f "$DEST/usr/local/share/man/man5/mpin.conf.5" -a -f "$DEST/usr/local/share/man/man8/pam_mpin.8" \
       -a -f "$DEST/usr/local/share/man/man8/mpinctl.8" -a -f "$DEST/usr/local/share/man/man8/mpin-server.8" \
       -a -f "$DEST/usr/local/share/man/man1/mpin.1"
check_all "the module and the helper are stripped" \
  '! readelf -S "$DEST$PAMDIR/pam_mpin.so" | grep -q "\.symtab" && ! readelf -S "$DEST/usr/libexec/mpin/mpin-pam-helper" | grep -q "\.symtab"'
LDD=$(ldd "$DEST$PAMDIR/pam_mpin.so" "$DEST/usr/libexec/mpin/mpin-pam-helper" "$DEST/usr/local/sbin/mpinctl" \
          "$DEST/usr/local/bin/mpin" "$DEST/usr/local/bin/mpin-server" 2>&1)
check_all "no installed program needs a libswift* or a missing library" \
  '[ -n "$LDD" ] && ! grep -qiE "swift|not found" <<<"$LDD"'
check "the installed mpinctl runs" [ "$("$DEST/usr/local/sbin/mpinctl" version)" = "mpinctl $(sed -n 's/.*static let version = "\(.*\)".*/\1/p' "$ROOT/Sources/MPinClient/Core/MPinSDK.swift")" ]
summary
