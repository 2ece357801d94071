# Engram's two entry points. Both install what is missing first (scripts/setup.sh), so they work
# on a fresh Debian/Ubuntu machine with Rust and Node.js.
#
#   make run    build the UI and start the desktop app
#   make bench  recall and dream quality on the labeled sets per provider; offline extraction precision
#               and recall on its labeled set (tuning and held-out halves); the token budget at work;
#               scan, index, lint, open and the session paths timed against their floors
#   make soak   the release app and the real Claude Code left to run together (SOAK_MINUTES, default 10)
#   make fuzz   libFuzzer over the parsers of outside input (FUZZ_SECONDS each, default 600)
#   make test   everything CI checks: format, lints, Rust and UI tests, UI build and types, the
#               end-to-end test of the real app under Xvfb, and a 3-minute soak
#   make package       the .deb and .rpm (Tauri's bundler), in target/package/
#   make package-test  the .deb installed with apt into a fresh minimal Debian 12 root and used
#                      there: the CLI on a Claude home, the app from its .desktop entry under Xvfb
#                      (root; screenshots in target/package-test/)
#
# Every cargo invocation passes the same --features: a different feature set rebuilds the whole
# GTK/WebKit dependency graph (~70 s).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

CARGO_FEATURES := --features engram-app/custom-protocol
XVFB := xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session --

.PHONY: run test bench soak fuzz package package-test setup setup-test setup-package ui ui-test

run: setup ui
	cargo run --locked -p engram-app $(CARGO_FEATURES)

# The compatibility tests run the real Claude Code CLI that setup-test installs; naming it here
# makes a missing binary a failure instead of a skip.
test: export ENGRAM_TEST_CLAUDE := $(CURDIR)/target/tools/claude-code/node_modules/.bin/claude
# Likewise the local embedding model: the local-recall tests run the real one.
test: export ENGRAM_TEST_MODELS := $(CURDIR)/target/tools/models
test: setup-test ui-test ui
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked $(CARGO_FEATURES) -- -D warnings
	cargo test --workspace --locked $(CARGO_FEATURES)
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_settings_recall -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_dreams -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_sessions -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_agents -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_sync -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_first_run -- --ignored
	$(XVFB) cargo test --locked -p engram-app $(CARGO_FEATURES) --test e2e_no_tray -- --ignored
	$(MAKE) --no-print-directory soak SOAK_MINUTES=3

# Release build: debug timings say nothing about what users get.
# Local recall is measured with the real model (setup fetches it; ENGRAM_MODELS_DIR overrides).
bench: export ENGRAM_MODELS_DIR := $(or $(ENGRAM_MODELS_DIR),$(CURDIR)/target/tools/models)
# The app's cold start is timed on the release app, whose build embeds the UI.
bench: ui
	scripts/setup.sh --bench
	cargo build --release --locked -p engram-cli
	cargo build --release --locked -p engram-app $(CARGO_FEATURES)
	cargo run --release --locked -p engram-bench

# The product left to run by itself: the release app under Xvfb, Claude Code's hooks installed, the
# real Claude Code driven through many sessions against a scripted model for SOAK_MINUTES (default
# 10), background dreams on with short gates; prints and checks dreams, extractions, recall, lost
# memories, the app's resources, idle CPU, and what is left after quitting (bench/src/soak.rs).
SOAK_MINUTES ?= 10
soak: export ENGRAM_TEST_CLAUDE := $(CURDIR)/target/tools/claude-code/node_modules/.bin/claude
soak: setup-test ui
	cargo build --release --locked -p engram-cli
	cargo build --release --locked -p engram-app $(CARGO_FEATURES)
	cargo run --release --locked -p engram-bench -- --soak $(SOAK_MINUTES)

# Release binaries, bundled as they are (scripts/package.sh says what goes in and why).
package: setup-package ui
	cargo build --release --locked -p engram-cli
	cargo build --release --locked -p engram-app $(CARGO_FEATURES)
	scripts/package.sh

# Not part of `make test`: a cold run adds the release build and a Debian root (see
# docs/packaging.md for the times).
package-test: package
	scripts/setup.sh --package-test
	scripts/package-test.sh

# libFuzzer over every parser of outside input (FUZZ_SECONDS per target, default 600); nightly.
fuzz:
	scripts/fuzz.sh

setup:
	scripts/setup.sh

setup-test:
	scripts/setup.sh --test

setup-package:
	scripts/setup.sh --package

# The app embeds ui/dist at compile time, so the UI is built before cargo runs.
ui:
	cd ui && npm run build --silent

ui-test:
	cd ui && npm run check --silent && npx vitest run
