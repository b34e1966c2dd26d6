# mpin-pam: M-Pin zero-knowledge PIN authentication for Linux logins.
#   make test    installs what it needs (apt-get, idempotent), builds, runs every test
#   make bench   release build, one line per operation: NAME MICROSECONDS
#   make demo    the M-Pin protocol end to end

SWIFT       ?= swift
SHARED      ?= ../shared
# System packages the build and the tests need (Debian names).
APT_PACKAGES = pkg-config libssl-dev libpam0g-dev libcurl4-openssl-dev libsqlite3-dev
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-unit test-vectors bench demo clean

all: build

# Installs only what is missing, so repeated runs do no network work.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c release

# Tests run on a release build: the pairing-heavy vector suites are slow unoptimised.
# No test uses @testable, so testable imports are off: `swift test` then reuses the release
# build instead of recompiling every module (and every dependency) with -enable-testing.
test: deps test-unit test-vectors

test-unit:
	$(SWIFT) build -c release
	$(SWIFT) test -c release --disable-testable-imports

test-vectors:
	$(SWIFT) build -c release --product mpin-vectors
	.build/release/mpin-vectors $(SHARED)/vectors/mpin_BN254_CX.json $(SHARED)/vectors/mpin_BN254_CXOnePass.json

bench: deps
	$(SWIFT) build -c release --product mpin-bench
	$(SWIFT) build -c release --product mpin-server-bench
	.build/release/mpin-bench
	.build/release/mpin-server-bench

demo: deps
	$(SWIFT) build -c release --product mpin-demo
	.build/release/mpin-demo

clean:
	rm -rf .build .build-*
