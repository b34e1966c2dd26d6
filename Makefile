# mpin-pam: M-Pin zero-knowledge PIN authentication for Linux logins.
#   make test    installs what it needs (apt-get, idempotent), builds, runs every test
#   make bench   release build, one line per operation: NAME MICROSECONDS
#   make bench-mcl  the crypto beside mcl's on the same curve (builds mcl in a temporary directory)
#   make bench-scale  logins/s with 1, 2, 3 mpin-server nodes on one PostgreSQL (part of bench)
#   make ct-check  constant-time evidence for the crypto's secret paths (docs/CRYPTO.md §11)
#   make demo    the M-Pin protocol end to end
#   make fuzz    libFuzzer + AddressSanitizer over every parser and decoder (FUZZ_SECONDS=N each)
#   make deb     the Debian packages libpam-mpin and mpin-server in .build/deb, checked by lintian

SWIFT       ?= swift
# Reference data kept beside the repository (Milagro's vectors, recorded traffic). Without it the
# tests that need it are skipped, saying so; `make test SHARED=DIR` reads it from DIR, which
# must then exist. The Swift tests get it as MPIN_SHARED (Tests/MPinReferenceData).
SHARED      ?= ../shared
SHARED_DIR   = $(abspath $(SHARED))
SHARED_NAMED = $(filter command line environment,$(origin SHARED))
# Fails when SHARED=DIR was given and DIR is not a directory; else true.
SHARED_CHECK = @if [ -n "$(SHARED_NAMED)" ] && [ ! -d "$(SHARED_DIR)" ]; then \
                 echo "SHARED=$(SHARED): no such directory" >&2; exit 1; fi
# release_product NAME: `swift build` of one release product. `make test-pam test-login NOBUILD=1`
# runs the integration suites on the products already in .build/release instead (.ci/run copies
# them into a second clone).
# An optional second argument adds build options (`make deb`: --static-swift-stdlib).
release_product = $(if $(NOBUILD),@echo "NOBUILD: $(1) as found in .build/release",$(SWIFT) build -c release --product $(1) $(2))
# System packages the build and the tests need (Debian names).
APT_PACKAGES = pkg-config libssl-dev libpam0g-dev libcurl4-openssl-dev libsqlite3-dev pamtester libpam-wrapper openssl socat \
               openssh-server openssh-client sudo groff-base mandoc python3 python3-jwcrypto zbar-tools systemd \
               python3-pexpect dpkg-dev lintian adduser postgresql chromium python3-authlib python3-websocket \
               login util-linux polkitd pkexec dbus-daemon \
               selinux-policy-dev selinux-policy-default setools checkpolicy semodule-utils \
               libtss2-dev swtpm swtpm-tools tpm2-tools
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps packages build module test test-man test-selinux test-unit test-vectors test-postgres test-pam test-backup test-login test-hosts test-weblogin test-deb test-install deb bench bench-mcl bench-scale ct-check demo demo-crypto fuzz test-fuzz install clean

# Where `make install` puts things.
PREFIX      ?= /usr/local
PAMDIR      ?= /lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/security
# mpin-pam-helper, where pam_mpin.so runs it from unless its pam.d line says helper=PATH. Fixed
# like PAMDIR (the module has it compiled in), not under PREFIX.
HELPERDIR   ?= /usr/libexec/mpin
CONFDIR     ?= /etc/mpin
STOREDIR    ?= /var/lib/mpin
MANDIR      ?= $(PREFIX)/share/man
# The manual pages, written in mdoc (no build step).
MAN1        = man/mpin.1
MAN5        = man/mpin.conf.5
MAN8        = man/pam_mpin.8 man/mpinctl.8 man/mpin-server.8

all: build

# mpin-pam-helper links a copy of the toolchain's static libswiftCore.a in which --gc-sections may
# drop the standard library functions it never calls (pam/module-stdlib.py says why that is
# safe); about 0.9 MB less to load on every login. Package.swift reads its path from
# MPIN_MODULE_STDLIB, exported to every `swift` this Makefile runs so that all of them see one
# manifest. Rebuilt when the script or the toolchain changes.
MODULE_STDLIB := $(CURDIR)/.build/module-stdlib/libswiftCore.a
export MPIN_MODULE_STDLIB := $(MODULE_STDLIB)
SWIFTC        := $(shell command -v swiftc)
$(MODULE_STDLIB): pam/module-stdlib.py $(realpath $(SWIFTC)) | packages
	python3 pam/module-stdlib.py $@ $(SWIFTC)

# What every build needs: the system packages, and the libswiftCore.a copy mpin-pam-helper links.
# Make expands a rule's prerequisites when it reads the rule, so this rule must come after
# MODULE_STDLIB is assigned (placed before it, `deps` named no library and a fresh clone's
# `make demo` failed to link).
deps: packages $(MODULE_STDLIB)

# Installs only what is missing, so repeated runs do no network work.
packages:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps module
	$(SWIFT) build -c release

# pam_mpin.so (pam/Module/*.swift): Embedded Swift, built with the toolchain's swiftc (no
# Swift runtime library, no SwiftPM) and linked with its clang; about 23 KB stripped. It runs
# mpin-pam-helper (Swift) for each call; the tests name the helper in the build tree with
# helper=PATH. pam/Module/module.modulemap gives it libc, libpam and the helper protocol
# (Sources/CPAMProtocol); MPIN_PAM_HELPER, the installed helper's path, reaches it as a C
# define through that header. Exports only pam_sm_* (pam/pam_mpin.map, which also hides the
# swift_* functions Embedded Swift compiles into it); stack protector, FORTIFY for the C
# headers' inline code, full RELRO, no executable stack.
MODULE_SO       := .build/pam/pam_mpin.so
MODULE_OBJ      := .build/pam/pam_mpin.o
MODULE_SOURCES  := $(wildcard pam/Module/*.swift)
MODULE_HEADERS  := pam/Module/module.modulemap pam/Module/pam_mpin_shim.h Sources/CPAMProtocol/mpin_pam_protocol.h
MODULE_SWIFTC   ?= $(SWIFTC)
MODULE_CC       ?= $(shell command -v clang || command -v cc)
MODULE_SWIFTFLAGS ?= -enable-experimental-feature Embedded -wmo -Osize -parse-as-library \
                     -Xfrontend -enable-stack-protector -Xfrontend -function-sections \
                     -Xcc -O2 -Xcc -D_FORTIFY_SOURCE=2 -Xcc -fstack-protector-strong -Xcc -fPIC
module: $(MODULE_SO)
$(MODULE_OBJ): $(MODULE_SOURCES) $(MODULE_HEADERS) Makefile | packages
	mkdir -p $(@D)
	$(MODULE_SWIFTC) $(MODULE_SWIFTFLAGS) -module-name PAMMpin -module-cache-path $(@D)/module-cache \
		-Ipam/Module -ISources/CPAMProtocol -Xcc '-DMPIN_PAM_HELPER="$(HELPERDIR)/mpin-pam-helper"' \
		-c -o $@ $(MODULE_SOURCES)
$(MODULE_SO): $(MODULE_OBJ) pam/pam_mpin.map
	$(MODULE_CC) -shared -o $@ $(MODULE_OBJ) -lpam -Wl,--version-script=pam/pam_mpin.map \
		-Wl,-z,relro,-z,now -Wl,-z,noexecstack -Wl,--gc-sections -Wl,--as-needed

# Tests run on a release build: the pairing-heavy vector suites are slow unoptimised. The
# tests use public API only, so testable imports stay off and the test build reuses the
# release build instead of compiling every dependency a second time.
test: deps test-man test-selinux test-unit test-vectors test-postgres test-pam test-backup test-login test-hosts test-weblogin test-deb test-install test-fuzz

# The manual pages render without a warning from groff (-ww) or mandoc's lint, and document
# every option, key, return code and exit status the code has (Tests/Man/check-man.sh).
test-man:
	bash Tests/Man/check-man.sh

# The SELinux policy module (packaging/selinux) compiled as `make deb` compiles it, linked into
# Debian's reference policy and questioned with sesearch (Tests/Integration/selinux-tests.sh);
# checked, not enforced: this machine need not run SELinux.
test-selinux: | packages
	bash Tests/Integration/selinux-tests.sh

test-unit: $(MODULE_STDLIB)
	$(SHARED_CHECK)
	$(SWIFT) build -c release
	MPIN_SHARED="$(SHARED_DIR)" $(SWIFT) test -c release --disable-swift-testing --disable-testable-imports

test-vectors: $(MODULE_STDLIB)
	$(SHARED_CHECK)
ifeq ($(wildcard $(SHARED_DIR)/.),)
	@echo "test-vectors: skipped: no reference data at $(SHARED_DIR) (put it at ../shared, or make test SHARED=DIR)"
else
	$(SWIFT) build -c release --product mpin-vectors
	.build/release/mpin-vectors $(SHARED)/vectors/mpin_BN254_CX.json $(SHARED)/vectors/mpin_BN254_CXOnePass.json \
		$(SHARED)/vectors/mpin_dvs_BN254CX_sample.json
endif

# mpin-server on PostgreSQL, on a throwaway cluster (Tests/Integration/postgres.sh: 127.0.0.1 only,
# stopped and deleted afterwards): the server-level storage tests again on PostgreSQL (the
# *PostgresTests classes; test-unit reports them as skipped), the schema-version refusal, and
# two `mpin-server serve` nodes on one database (MultiNodeTests: 50 parallel wrong PINs over both
# nodes, 200 parallel logins, a node killed under load; they print their figures).
# `swift test` with test-unit's flags reuses its build (a `swift build --build-tests` would
# compile every module again with testability on).
test-postgres: $(MODULE_STDLIB)
	$(SWIFT) build -c release --product mpin-server
	bash Tests/Integration/postgres.sh run $(SWIFT) test -c release --disable-swift-testing \
		--disable-testable-imports --filter 'PostgresTests|SchemaVersionTests|MultiNodeTests'

# pam_mpin.so through pamtester + libpam-wrapper against a real mpin-server on 127.0.0.1 (the
# logins, TLS, users with no registration, the helper: one suite each), in token mode and in
# device mode (approved by the per-user `mpin` command); then the attacks of docs/SECURITY.md §6:
# an impostor on the backend's port (impostor-tests.sh), a registration started by someone else
# and a flood of pass 1s (activation-tests.sh); self-enrolment with a code from `mpin-server user
# invite` (enrol-tests.sh, pam_mpin(8), OPTIONS); the resident helper and the listeners that must
# not be trusted in its place (resident-tests.sh, docs/DESIGN.md §2).
test-pam: $(MODULE_STDLIB) module
	$(call release_product,mpin-pam-helper)
	$(call release_product,mpinctl)
	$(call release_product,mpin-server)
	$(call release_product,mpin)
	bash Tests/Integration/pam-tests.sh
	bash Tests/Integration/pam-tls-tests.sh
	bash Tests/Integration/pam-unregistered-tests.sh
	bash Tests/Integration/pam-helper-tests.sh
	bash Tests/Integration/device-tests.sh
	bash Tests/Integration/impostor-tests.sh
	bash Tests/Integration/activation-tests.sh
	bash Tests/Integration/host-security-tests.sh
	bash Tests/Integration/enrol-tests.sh
	bash Tests/Integration/resident-tests.sh
	bash Tests/Integration/recovery-tests.sh
	bash Tests/Integration/offline-tests.sh

# mpin-server backup and restore (Tests/Integration/backup-tests.sh): a backup taken while logins
# run, the data directory (and the PostgreSQL schema) wiped, the restore, and the user's old token
# logging in again through pam_mpin.so; tampered backups, existing state without and with --force,
# a restore under a serving server or another database session. On SQLite, then on a throwaway
# PostgreSQL cluster (postgres.sh, 127.0.0.1 only, stopped and deleted afterwards).
test-backup: $(MODULE_STDLIB) module
	$(call release_product,mpin-pam-helper)
	$(call release_product,mpinctl)
	$(call release_product,mpin-server)
	bash Tests/Integration/backup-tests.sh

# The OpenID provider's web login as a person does it (docs/MFA.md §5): `mpin approve` and `mpin
# refuse` against the login page's codes, then headless Chromium (Debian's chromium) through the
# page to a relying party on python3-authlib. Screenshots of the page's states in
# .build/weblogin-artifacts.
test-weblogin: $(MODULE_STDLIB) | packages
	$(call release_product,mpin-server)
	$(call release_product,mpin)
	WEBLOGIN_REQUIRE_BROWSER=1 bash Tests/Integration/weblogin-tests.sh

# A real sshd (keyboard-interactive) and a real sudo with pam_mpin.so; needs root. A throwaway
# user and sudo's PAM file are restored afterwards.
test-login: test-pam
	bash Tests/Integration/login-tests.sh

# Every PAM host and who must pass (Tests/Integration/hosts-tests.sh; pam_mpin(8), OPTIONS):
# require_group, exempt_group and nouserok_root with the test name service's groups (a look-alike
# group, a failing name service); callers that cannot prompt (no conversation, sudo -n) in token and
# device mode, and what reaches a recorded conversation in which order; then real su and login on a
# pseudo-terminal, sudo -n, and sshd with publickey,keyboard-interactive. Needs root.
test-hosts: test-pam
	bash Tests/Integration/hosts-tests.sh

# The version, from one place: MPinSDK.version in MPinClient (what `mpinctl version` prints);
# the packages are VERSION-DEB_REVISION.
VERSION      := $(shell sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/MPinClient/Core/MPinSDK.swift)
DEB_REVISION ?= 1
DEB_DIR      ?= .build/deb

# libpam-mpin (pam_mpin.so, mpin-pam-helper, mpinctl and mpin as one program, /etc/mpin/mpin.conf,
# the pam-auth-update profile) and
# mpin-server (the server, its systemd unit, its system user) for this machine's architecture,
# staged and built with Debian's tools by packaging/build-deb.sh; lintian must find no error.
# The programs link the Swift runtime statically, so the packages need no Swift toolchain
# (going from a `make test-pam` build to this one and back relinks the products, it does not
# recompile their dependencies).
deb: deps module
	$(call release_product,mpin-pam-helper,--static-swift-stdlib)
	$(call release_product,mpinctl,--static-swift-stdlib)
	$(call release_product,mpin-server,--static-swift-stdlib)
	VERSION=$(VERSION) DEB_REVISION=$(DEB_REVISION) bash packaging/build-deb.sh $(DEB_DIR)
	lintian --fail-on error $(DEB_DIR)/libpam-mpin_$(VERSION)-$(DEB_REVISION)_*.deb $(DEB_DIR)/mpin-server_$(VERSION)-$(DEB_REVISION)_*.deb

# Installs both packages, logs in through the installed module (pamtester, sudo, sshd) against the
# installed server, purges them and checks /etc/pam.d is byte for byte what it was; needs root.
test-deb: deb
	DEB_DIR="$(abspath $(DEB_DIR))" VERSION=$(VERSION) DEB_REVISION=$(DEB_REVISION) bash Tests/Integration/deb-tests.sh

# `make install DESTDIR=` into a temporary root: files, modes, stripping, no toolchain library
# needed at run time (Tests/Integration/install-tests.sh); after test-deb, whose statically
# linked builds it reuses.
test-install: deps module
	bash Tests/Integration/install-tests.sh

# Constant-time evidence for MPinCrypto's secret paths (docs/CRYPTO.md §11): every conditional
# jump in their release machine code, sorted and shown with the test that feeds it
# (Tests/ConstantTime/objdump-check.py), then the instructions valgrind counts for the bench's
# multiplications by scalars of Hamming weight 1 and 253 (Tests/ConstantTime/instruction-counts.sh).
ct-check: packages
	@command -v valgrind >/dev/null || $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind binutils
	$(SWIFT) build -c release --product mpin-bench
	python3 Tests/ConstantTime/objdump-check.py .build/release/mpin-bench
	bash Tests/ConstantTime/instruction-counts.sh .build/release/mpin-bench

bench: deps module
	$(SWIFT) build -c release --product mpin-bench
	$(SWIFT) build -c release --product mpin-server-bench
	.build/release/mpin-bench
	bash Tests/Integration/postgres.sh run .build/release/mpin-server-bench
	$(SWIFT) build -c release --product mpin-pam-helper
	$(SWIFT) build -c release --product mpinctl
	$(SWIFT) build -c release --product mpin-server
	bash Tests/Integration/pam-bench.sh
	bash Tests/Integration/offline-bench.sh
	$(SWIFT) build -c release --product mpin
	bash Tests/Integration/device-bench.sh
	$(MAKE) bench-scale

# Logins per second with 1, 2 and 3 mpin-server processes (nodes) on one PostgreSQL database on
# this machine (Tests/Integration/scale-bench.sh: a throwaway cluster, the nodes on 127.0.0.1,
# mpin-server-bench spreading its clients over them); part of `make bench`.
bench-scale: deps
	$(SWIFT) build -c release --product mpin-server
	$(SWIFT) build -c release --product mpin-server-bench
	bash Tests/Integration/scale-bench.sh

# MPinCrypto against mcl (github.com/herumi/mcl) on the same curve, BN254CX, side by side in one
# run (docs/PERFORMANCE.md §2.1): pairing, double pairing, G1 and G2 multiplication by a secret,
# each with its ratio ours/mcl. mcl is cloned and built in a temporary directory (about 2 min; needs
# git, g++ and libgmp-dev) and deleted afterwards; MCL_SRC=DIR uses a source tree already on disk.
# Tests/Bench/mcl-bench.sh says how it times (thread CPU time, interleaved rounds, medians).
bench-mcl:
	$(SWIFT) build -c release --product mpin-bench
	MCL_SRC="$(MCL_SRC)" bash Tests/Bench/mcl-bench.sh .build/release/mpin-bench

# The main job on the embedded backend: server (HTTPS with a self-signed certificate;
# `make demo PLAIN_HTTP=1` for plain HTTP on 127.0.0.1), registration, two PAM logins.
demo: deps module
	$(SWIFT) build -c release --product mpin-pam-helper
	$(SWIFT) build -c release --product mpinctl
	$(SWIFT) build -c release --product mpin-server
	PLAIN_HTTP="$(PLAIN_HTTP)" DEMO_RIGHT_PIN="$(DEMO_RIGHT_PIN)" bash pam/demo.sh

# The protocol alone, in one process (no server, no PAM).
demo-crypto: deps
	$(SWIFT) build -c release --product mpin-demo
	.build/release/mpin-demo

# libFuzzer harnesses with AddressSanitizer: Sources/MPinFuzz (the parsers and decoders, one
# binary, MPIN_FUZZ_HARNESS picks one; harness `module` is pam_mpin.so's frame parser,
# pam/Module/Frame.swift, linked in as Sources/MPinFuzz/ModuleFrame.swift) and Sources/MPinFuzzServer (harness `server`: every
# route of the server in process, over a SQLite data directory in a temporary directory; its
# invariants are in ServerInvariants.swift). How the build works: the harness targets exist
# only when MPIN_FUZZ=1 (see the end of Package.swift), so a plain `swift build` never sees
# them; then only this package's modules get -sanitize=fuzzer,address and -enable-testing (per
# target), and the dependencies (Hummingbird, NIO, GRDB, BoringSSL) build plain in release, in
# the scratch path $(FUZZ_DIR). Seeds come from ../shared (recorded traffic, vectors)
# and Tests/Fuzz/seeds, gathered into $(FUZZ_DIR)/corpus/HARNESS, which keeps what each run
# finds; make-corpus.py also stops when the server harness's route table and the server's
# routes differ. A crash or broken property stops `make fuzz` and leaves the input in
# $(FUZZ_DIR)/findings/HARNESS/ (not under $(FUZZ_DIR)/artifacts, which SwiftPM clears). The
# sanitizer prints the stack: Swift's own backtracer is off (SWIFT_BACKTRACE), because under
# AddressSanitizer it hung for minutes after a harness's fatalError, and `make fuzz` with it. Replay with
#   MPIN_FUZZ_HARNESS=HARNESS $(FUZZ_DIR)/release/mpin-fuzz FILE     (server: mpin-fuzz-server FILE)
# `make test` runs each harness briefly (test-fuzz). On a 2-core machine the sanitized build
# of mpin-fuzz takes about 45 s. mpin-fuzz-server's first build compiles the server's
# dependencies in release once more, in $(FUZZ_DIR): 16.5 min of CPU (27.7 min wall on a
# 2-core VM that three other builds shared; two idle cores would need at least 8.3 min,
# the CPU time over two, not measured); later builds
# recompile only what changed.
FUZZ_SECONDS   ?= 10
FUZZ_DIR       ?= .build-fuzz
FUZZ_HARNESSES ?= json wire wiretext http g1 g2 scalar config server module
FUZZ_BUILD      = MPIN_FUZZ=1 $(SWIFT) build -c release --scratch-path $(FUZZ_DIR)
fuzz: deps
	$(FUZZ_BUILD) --product mpin-fuzz
	$(if $(filter server,$(FUZZ_HARNESSES)),$(FUZZ_BUILD) --product mpin-fuzz-server)
	python3 Tests/Fuzz/make-corpus.py "$(SHARED_DIR)" $(FUZZ_DIR)/corpus
	@for h in $(FUZZ_HARNESSES); do \
	  echo "== fuzz $$h: $(FUZZ_SECONDS) s"; \
	  mkdir -p $(FUZZ_DIR)/findings/$$h; \
	  bin=mpin-fuzz; [ $$h = server ] && bin=mpin-fuzz-server; \
	  SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Fuzz/lsan-suppressions.txt \
	  MPIN_FUZZ_HARNESS=$$h $(FUZZ_DIR)/release/$$bin -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/findings/$$h/ \
	    $(FUZZ_DIR)/corpus/$$h 2>$(FUZZ_DIR)/findings/$$h.log \
	  || { tail -40 $(FUZZ_DIR)/findings/$$h.log; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^stat::new_units_added' $(FUZZ_DIR)/findings/$$h.log; \
	done

TEST_FUZZ_SECONDS ?= 5
test-fuzz:
	$(MAKE) fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# Installs the module and its helper (stripped), the CLI, the server and the manual pages; keeps an existing
# configuration. The programs link the Swift runtime statically, as the packages' do: without
# that, mpinctl, mpin and mpin-server would load the toolchain's libswift*.so from wherever
# the toolchain was when they were built, and stop working when it moves or goes.
install: deps module
	$(SWIFT) build -c release --product mpin-pam-helper --static-swift-stdlib
	$(SWIFT) build -c release --product mpinctl --static-swift-stdlib
	$(SWIFT) build -c release --product mpin-server --static-swift-stdlib
	install -d -m 0755 $(DESTDIR)$(PAMDIR) $(DESTDIR)$(HELPERDIR) $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(CONFDIR)
	install -m 0644 -s --strip-program=strip $(MODULE_SO) $(DESTDIR)$(PAMDIR)/pam_mpin.so
	install -m 0755 -s --strip-program=strip .build/release/mpin-pam-helper $(DESTDIR)$(HELPERDIR)/mpin-pam-helper
	install -m 0755 .build/release/mpinctl $(DESTDIR)$(PREFIX)/sbin/mpinctl
	# mpin is mpinctl run by that name, one program as in the package (packaging/build-deb.sh).
	ln -sfn ../sbin/mpinctl $(DESTDIR)$(PREFIX)/bin/mpin
	install -m 0755 .build/release/mpin-server $(DESTDIR)$(PREFIX)/bin/mpin-server
	[ -e $(DESTDIR)$(CONFDIR)/mpin.conf ] || install -m 0644 Config/mpin.conf $(DESTDIR)$(CONFDIR)/mpin.conf
	install -d -m 0700 -o root -g root $(DESTDIR)$(STOREDIR)
	install -d -m 0755 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/

clean:
	rm -rf .build .build-*
