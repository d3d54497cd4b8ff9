# ifmeter: build, test, run and install. `make run` and `make test` work on a
# fresh Debian machine: `deps` installs the Debian packages the build and the
# tests need when they are missing.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DOCDIR ?= $(PREFIX)/share/doc/ifmeter
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
SWIFT ?= swift
# The daemon's state directory for `make run`: inside the checkout, ignored by git.
RUN_STATE_DIR ?= $(CURDIR)/state
RUN_ARGS ?=

# Build: libnl (link dumps and events), SQLite (the store), pkg-config.
# sd_notify is written by hand (CKernel/notify.c): no libsystemd.
DEB_PACKAGES := pkg-config libnl-3-dev libnl-route-3-dev libsqlite3-dev zlib1g-dev
# Tests: iproute2 (namespaces, tun, veth), sqlite3, util-linux (runuser,
# unshare, nsenter, script), systemd (systemd-analyze, and PID 1 of the
# real-systemd test), promtool and node_exporter (the metrics file checked by
# the real consumers), mandoc (man page lint), zsh and fish (completion
# syntax), lintian (the package), procps (pgrep) and curl (node_exporter's
# /metrics) for the real-systemd test; librsvg2-bin (rsvg-convert) and netpbm
# (pngtopnm) render the graphs to pixels the tests inspect. The real-kernel
# lane (Tests/vm) boots Debian's kernel in qemu on a guest that debootstrap
# builds, packed by xz-utils, cpio and e2fsprogs (mkfs.ext4 -d).
TEST_PACKAGES := iproute2 sqlite3 vnstat util-linux procps systemd prometheus prometheus-node-exporter mandoc zsh fish lintian curl \
	librsvg2-bin netpbm qemu-system-x86 debootstrap xz-utils cpio e2fsprogs

# The one version source; the Debian revision counts packagings of it.
VERSION := $(shell sed -n 's/^ *[a-z]* static let number = "\([^"]*\)"$$/\1/p' Sources/IfmeterCore/Version.swift)
DEB_REVISION ?= 1
DEB_DIR ?= $(CURDIR)/.build/deb
DEB_ARCH = $$(dpkg --print-architecture)
DEB_FILE = $(DEB_DIR)/ifmeter_$(VERSION)-$(DEB_REVISION)_$(DEB_ARCH).deb

.PHONY: test-vm vm-lane test-unit all toolchain deps test-deps bench-deps install-packages build release deb test soak fuzz fuzz-check asan bench memory link-order run install uninstall clean

all: build

deps: toolchain
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"

test-deps: toolchain
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES) $(TEST_PACKAGES)"

# The one thing `deps` cannot install: Swift is no Debian package.
toolchain:
	@command -v $(SWIFT) >/dev/null 2>&1 || { echo "make: $(SWIFT) not found: unpack the Swift 6 toolchain for Debian 12 (swift.org, Install, Linux) and put its usr/bin on PATH" >&2; exit 69; }

# Installs the Debian packages in PACKAGES that are missing (root, or sudo).
# Services they ship (prometheus on :9090, node_exporter on :9100) are not
# started: a policy-rc.d answering 101 ("action forbidden") stands while apt
# runs, unless the machine already has one of its own.
install-packages:
	@missing=""; \
	for package in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing (their services are not started)"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  policy=""; \
	  if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    policy=/usr/sbin/policy-rc.d; \
	    printf '#!/bin/sh\nexit 101\n' | $$sudo tee $$policy >/dev/null && $$sudo chmod 0755 $$policy; \
	  fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	  status=$$?; \
	  [ -z "$$policy" ] || $$sudo rm -f $$policy; \
	  exit $$status; \
	fi

# The peers make bench measures against, and what drives them.
BENCH_PACKAGES := vnstat prometheus-node-exporter curl sqlite3 iproute2 python3

bench-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES) $(BENCH_PACKAGES)"

# Not part of `make test`: about 20 minutes, root. Writes BENCHMARKS.md.
bench: bench-deps release
	bench/run.sh

# ifmeterd's memory alone, measured as make bench does, without the rest of
# it (root, about two minutes; MEMORY_ROUNDS, MEMORY_WAIT, MEMORY_DETAIL).
memory: release
	@$(MAKE) --no-print-directory install-packages PACKAGES="iproute2 util-linux"
	bench/memory.sh

# Rewrites link/ifmeterd.order from a profile of the release daemon (root,
# valgrind, about a minute), then links the daemon in that order.
link-order: release
	@$(MAKE) --no-print-directory install-packages PACKAGES="valgrind iproute2 util-linux"
	bench/link-order.sh
	@$(MAKE) --no-print-directory release

build: deps
	$(SWIFT) build

# The fault suite's long run: many more kill -9 rounds than `make test`.
SOAK_ROUNDS ?= 300
soak: test-deps
	$(SWIFT) build --build-tests
	IFMETER_SOAK_ROUNDS=$(SOAK_ROUNDS) $(SWIFT) test --skip-build --filter killNineAtRandomMoments

# libFuzzer over the configuration parser and ifmeter's command parser
# (CommandParser.parse, the one the CLI runs); new inputs it finds are
# added to the corpus that `make test` replays.
FUZZ_SECONDS ?= 60
FUZZ_SOURCES := $(wildcard Sources/IfmeterCore/Config/*.swift) $(wildcard Sources/IfmeterCore/Classify/*.swift) \
	$(wildcard Sources/IfmeterCore/System/FileSystem*.swift) Sources/IfmeterCore/System/SystemError.swift \
	Sources/IfmeterCore/System/Arguments.swift Sources/IfmeterAccounting/LinkSample.swift \
	Sources/IfmeterCore/Model/InterfaceName.swift Sources/IfmeterCore/Model/InterfaceClass.swift Sources/IfmeterCore/Model/StoreEdit.swift \
	$(wildcard Sources/IfmeterCore/Time/*.swift) Sources/IfmeterCore/Text/Units.swift Sources/IfmeterAccounting/CounterStep.swift \
	Sources/IfmeterCore/Report/InterfaceSelection.swift Sources/IfmeterCore/Report/GraphKind.swift \
	Sources/ifmeter/Command.swift Sources/ifmeter/CommandTable.swift

# The store fuzzer: hostile values in every column of a store, then every
# reader and the daemon's start-up over it (Fuzz/StoreFuzzer.swift).
STORE_FUZZ_SOURCES := $(filter-out Sources/IfmeterCore/Kernel/Netlink.swift Sources/IfmeterCore/Kernel/InterfaceAddresses.swift \
	$(wildcard Sources/IfmeterCore/Daemon/*.swift) Sources/IfmeterCore/System/ServiceManager.swift Sources/IfmeterCore/Kernel/ProcessContext.swift \
	Sources/IfmeterCore/Kernel/ChildProcess.swift Sources/IfmeterCore/Report/PNGRenderer.swift, \
	$(wildcard Sources/IfmeterCore/*/*.swift)) $(wildcard Sources/IfmeterAccounting/*.swift) Sources/IfmeterCore/Version.swift
PARSER_FUZZ_BUILD = -parse-as-library -module-name IfmeterFuzz -package-name ifmeter $(FUZZ_SOURCES) Fuzz/ParserFuzzer.swift
STORE_FUZZ_BUILD = -parse-as-library -module-name IfmeterFuzz -package-name ifmeter -D IFMETER_FUZZ \
	-I Sources/CSQLite -I Sources/CZlib \
	$(STORE_FUZZ_SOURCES) Tests/IfmeterKernelTests/Support/StoreFuzzHarness.swift Fuzz/StoreFuzzer.swift
fuzz: deps
	mkdir -p .build/fuzz
	swiftc -O -sanitize=fuzzer,address $(PARSER_FUZZ_BUILD) -o .build/fuzz/parsers
	.build/fuzz/parsers -artifact_prefix=.build/fuzz/ -max_total_time=$(FUZZ_SECONDS) -max_len=8192 Tests/IfmeterKernelTests/Corpus/config
	swiftc -O -sanitize=fuzzer,address $(STORE_FUZZ_BUILD) -o .build/fuzz/store
	.build/fuzz/store -artifact_prefix=.build/fuzz/ -max_total_time=$(FUZZ_SECONDS) -max_len=600 Tests/IfmeterKernelTests/Corpus/store

# Part of `make test`: both fuzzers' sources type-check, so a source list
# that falls behind the code fails at once, not at the next `make fuzz`.
fuzz-check: deps
	swiftc -typecheck $(PARSER_FUZZ_BUILD)
	swiftc -typecheck $(STORE_FUZZ_BUILD)

# The whole suite under AddressSanitizer (the daemons and CLIs it starts
# too). Leak checking is off for the test runner, whose harness leaks inside
# the toolchain's Foundation at exit; the product binaries then run alone
# with leak checking on, and any leak fails the target.
asan: test-deps
	$(SWIFT) build --build-tests --sanitize=address --build-path .build/asan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --build-path .build/asan
	state=$$(mktemp -d) && \
	  ASAN_OPTIONS=detect_leaks=1 .build/asan/debug/ifmeterd --state-dir $$state --once && \
	  ASAN_OPTIONS=detect_leaks=1 .build/asan/debug/ifmeter --state-dir $$state status > /dev/null && \
	  ASAN_OPTIONS=detect_leaks=1 .build/asan/debug/ifmeter --state-dir $$state days --json > /dev/null && \
	  rm -rf $$state

# Static Swift standard library: the binaries run without the toolchain.
# SwiftPM does not see link/ (Package.swift's link order and scripts): a
# change there relinks by removing the binaries.
release: deps
	@for file in link/*; do [ "$$file" -nt "$(RELEASE_BIN)/ifmeterd" ] && rm -f "$(RELEASE_BIN)/ifmeterd" "$(RELEASE_BIN)/ifmeter" && break; done; true
	$(SWIFT) build -c release --static-swift-stdlib

# Where `make release` leaves the binaries (SwiftPM's own link): install
# and deb read them without running swift, so `sudo make install` works
# where root has no toolchain on PATH.
RELEASE_BIN = $(CURDIR)/.build/release
NOT_BUILT = $(RELEASE_BIN)/ifmeterd is not built: run 'make release' first (as yourself), then 'sudo make install'

# The Debian package of the release build: .build/deb/ifmeter_VERSION-REVISION_ARCH.deb.
deb: release
	@packaging/deb/build.sh "$(RELEASE_BIN)" "$(VERSION)" "$(DEB_REVISION)" "$(DEB_DIR)"

# Installs what `make release` built; never builds. Checked as the Makefile
# is read, so the refusal is one line.
ifneq ($(filter install,$(MAKECMDGOALS)),)
  ifneq ($(words $(wildcard $(RELEASE_BIN)/ifmeterd $(RELEASE_BIN)/ifmeter)),2)
    $(error $(NOT_BUILT))
  endif
endif
install:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/ifmeter \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 "$(RELEASE_BIN)/ifmeterd" $(DESTDIR)$(SBINDIR)/
	install -m 0755 "$(RELEASE_BIN)/ifmeter" $(DESTDIR)$(BINDIR)/
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
	  systemd/ifmeterd.service > $(DESTDIR)$(UNITDIR)/ifmeterd.service
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' systemd/ifmeter-metrics.service > $(DESTDIR)$(UNITDIR)/ifmeter-metrics.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ifmeterd.service $(DESTDIR)$(UNITDIR)/ifmeter-metrics.service
	install -m 0644 systemd/ifmeterd.socket $(DESTDIR)$(UNITDIR)/ifmeterd.socket
	install -m 0644 systemd/sysusers.d/ifmeter.conf $(DESTDIR)$(SYSUSERSDIR)/ifmeter.conf
	install -m 0644 man/ifmeter.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/ifmeter.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/ifmeterd.8 $(DESTDIR)$(MANDIR)/man8/
	"$(RELEASE_BIN)/ifmeter" completions bash > $(DESTDIR)$(BASHCOMPDIR)/ifmeter
	"$(RELEASE_BIN)/ifmeter" completions zsh > $(DESTDIR)$(ZSHCOMPDIR)/_ifmeter
	"$(RELEASE_BIN)/ifmeter" completions fish > $(DESTDIR)$(FISHCOMPDIR)/ifmeter.fish
	install -m 0644 README.md LICENSE CHANGELOG.md $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -m 0644 systemd/ifmeter.conf $(DESTDIR)$(DOCDIR)/ifmeter.conf.example
	# An edited configuration is never overwritten.
	[ -e $(DESTDIR)$(SYSCONFDIR)/ifmeter/ifmeter.conf ] || install -m 0644 systemd/ifmeter.conf $(DESTDIR)$(SYSCONFDIR)/ifmeter/ifmeter.conf

# Leaves the configuration and the store (/var/lib/ifmeter): data is never deleted.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/ifmeterd $(DESTDIR)$(BINDIR)/ifmeter $(DESTDIR)$(UNITDIR)/ifmeterd.service $(DESTDIR)$(UNITDIR)/ifmeterd.socket \
	  $(DESTDIR)$(UNITDIR)/ifmeter-metrics.service $(DESTDIR)$(SYSUSERSDIR)/ifmeter.conf $(DESTDIR)$(MANDIR)/man1/ifmeter.1 $(DESTDIR)$(MANDIR)/man5/ifmeter.conf.5 \
	  $(DESTDIR)$(MANDIR)/man8/ifmeterd.8 $(DESTDIR)$(BASHCOMPDIR)/ifmeter $(DESTDIR)$(ZSHCOMPDIR)/_ifmeter $(DESTDIR)$(FISHCOMPDIR)/ifmeter.fish \
	  $(DESTDIR)$(DOCDIR)/README.md $(DESTDIR)$(DOCDIR)/LICENSE $(DESTDIR)$(DOCDIR)/CHANGELOG.md $(DESTDIR)$(DOCDIR)/ifmeter.conf.example
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(wildcard docs/*.md))
	-rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null

# The package is built first: the real-systemd test (Tests/systemd) boots
# systemd in a private namespace and installs it there.
test: test-deps deb fuzz-check
	$(SWIFT) build --build-tests
	# Two golden tests set TZ=UTC for the whole process: every test starts
	# in it, so none running beside them sees the zone change under it.
	TZ=UTC IFMETER_DEB="$(DEB_FILE)" $(SWIFT) test --skip-build
	@$(MAKE) --no-print-directory vm-lane

# The real-kernel lane alone: Wi-Fi, WireGuard and USB links in a Debian
# guest under qemu (Tests/vm/run.sh), on the release binaries.
test-vm: test-deps release
	@$(MAKE) --no-print-directory vm-lane

# Its "N passed, N failed" line, or one line saying why it cannot run here.
vm-lane:
	@if reason=$$(Tests/vm/run.sh --check); then Tests/vm/run.sh "$(RELEASE_BIN)"; else echo "vm lane: skipped: $$reason"; fi

# The unit tests alone: no root, no namespace, no binary; seconds.
test-unit: deps
	$(SWIFT) build --build-tests
	TZ=UTC $(SWIFT) test --skip-build --filter IfmeterUnitTests

# The daemon in the foreground on a state directory inside the checkout,
# logging what it does; Ctrl-C takes a final sample, commits and exits.
run: build
	@mkdir -p $(RUN_STATE_DIR)
	@echo "ifmeterd runs as PID $$$$: reload its configuration with kill -HUP $$$$, stop it with Ctrl-C"; \
	  exec "$$($(SWIFT) build --show-bin-path)/ifmeterd" --state-dir $(RUN_STATE_DIR) $(RUN_ARGS)

clean:
	rm -rf .build $(RUN_STATE_DIR)
