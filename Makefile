# ifmeter: build, test, run and install. `make run` and `make test` work on a
# fresh Debian machine: `deps` installs the Debian packages the build and the
# tests need when they are missing.

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
# The daemon's state directory for `make run`: inside the checkout, ignored by git.
RUN_STATE_DIR ?= $(CURDIR)/state
RUN_ARGS ?=

# Build: libnl (link dumps and events), SQLite (the store), pkg-config.
# Tests: iproute2 (ip netns, ip link) to build namespaces with tun and veth.
DEB_PACKAGES := pkg-config libnl-3-dev libnl-route-3-dev libsqlite3-dev iproute2

.PHONY: all deps build release test run install uninstall clean

all: build

deps:
	@missing=""; \
	for package in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --static-swift-stdlib

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The daemon in the foreground on a state directory inside the checkout,
# logging what it does; Ctrl-C takes a final sample, commits and exits.
run: build
	@mkdir -p $(RUN_STATE_DIR)
	"$$($(SWIFT) build --show-bin-path)/ifmeterd" --state-dir $(RUN_STATE_DIR) $(RUN_ARGS)

clean:
	rm -rf .build $(RUN_STATE_DIR)
