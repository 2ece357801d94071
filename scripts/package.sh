#!/usr/bin/env bash
# Builds Engram's Linux packages, a .deb and an .rpm, with Tauri's bundler, from the release
# binaries `make package` has just built. Each package holds:
#
#   /usr/bin/engram-app, /usr/bin/engram       the desktop app and the command
#   /usr/share/applications/Engram.desktop     its menu entry, and the icons
#   bash, zsh and fish completions, man pages  made by `engram generate` from the clap definition
#   the licences                               Engram's and those of the bundled third-party files
#                                              (gitleaks' rules, wordfreq's English word
#                                              frequencies, codespell's British spellings, the
#                                              Inter typeface)
#
# Dependencies are read from the binaries themselves: dpkg-shlibdeps for the .deb (packages with
# their minimum versions), the ELF sonames and symbol versions for the .rpm. The tray's library
# is loaded at run time, not linked, so it is declared by hand, as a Recommends: apt and dnf
# install it by default, and without it the app still starts (with no tray icon, and says so).
#
# AppImage is not built: Tauri's bundler downloads its tools (linuxdeploy, the AppImage runtime)
# at build time, from hosts this project's build machines cannot reach.
#
# Output: target/package/engram_<version>_amd64.deb and engram-<version>-1.x86_64.rpm.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
release=$root/target/release
out=$root/target/package
tauri=$root/target/tools/tauri-cli/node_modules/.bin/tauri

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }
fail() { echo "package.sh: $*" >&2; exit 1; }

for binary in engram engram-app; do
  [ -x "$release/$binary" ] || fail "$release/$binary is missing: run \`make package\`"
done
[ -x "$tauri" ] || fail "Tauri's CLI is missing: run \`scripts/setup.sh --package\`"
[ -f ui/node_modules/@fontsource-variable/inter/LICENSE ] ||
  fail "the UI's npm packages are missing: run \`scripts/setup.sh\`"

rm -rf "$out"
mkdir -p "$out/files/man"

step "Completions and man pages"
"$release/engram" generate bash >"$out/files/engram.bash"
"$release/engram" generate zsh >"$out/files/_engram"
"$release/engram" generate fish >"$out/files/engram.fish"
"$release/engram" generate man --dir "$out/files/man"
# Debian policy: man pages compressed, without a timestamp (reproducible).
gzip -9n "$out"/files/man/*.1

step "Dependencies, from the binaries"
# dpkg-shlibdeps wants a debian/control to read; an empty package entry is enough.
shlib=$(mktemp -d)
trap 'rm -rf "$shlib"' EXIT
mkdir "$shlib/debian"
printf 'Source: engram\n\nPackage: engram\nArchitecture: any\n' >"$shlib/debian/control"
deb_depends=$(cd "$shlib" && dpkg-shlibdeps -O --warnings=0 "$release/engram-app" "$release/engram" |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$deb_depends" ] || fail "dpkg-shlibdeps found no dependencies"
# What rpm's own dependency generator would write: every needed soname, and every symbol
# version needed from it, as `libfoo.so.1()(64bit)` and `libfoo.so.1(VERSION)(64bit)`.
rpm_requires=$(
  for binary in "$release/engram-app" "$release/engram"; do
    readelf --dynamic --wide "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1()(64bit)/p'
    readelf --version-info --wide "$binary" | awk '
      /^Version needs section/ { needs = 1; next }
      /^Version [a-z]+ section/ { needs = 0 }
      needs && /File: / { for (i = 1; i <= NF; i++) if ($i == "File:") file = $(i + 1) }
      needs && /Name: / { for (i = 1; i <= NF; i++) if ($i == "Name:") print file "(" $(i + 1) ")(64bit)" }'
  done | sort -u
)

# The parts of the bundle configuration that depend on this build, merged over tauri.conf.json.
step "Bundling with Tauri (deb, rpm)"
OUT="$out" RELEASE="$release" DEB_DEPENDS="$deb_depends" RPM_REQUIRES="$rpm_requires" node -e '
  const { OUT, RELEASE, DEB_DEPENDS, RPM_REQUIRES } = process.env;
  const files = (zsh) => ({
    "/usr/bin/engram": `${RELEASE}/engram`,
    "/usr/share/bash-completion/completions/engram": `${OUT}/files/engram.bash`,
    [`${zsh}/_engram`]: `${OUT}/files/_engram`,
    "/usr/share/fish/vendor_completions.d/engram.fish": `${OUT}/files/engram.fish`,
    "/usr/share/man/man1": `${OUT}/files/man`,
  });
  const config = {
    bundle: {
      active: true,
      linux: {
        deb: {
          depends: DEB_DEPENDS.split(/,\s*/),
          recommends: ["libayatana-appindicator3-1"],
          files: files("/usr/share/zsh/vendor-completions"),
        },
        rpm: {
          depends: RPM_REQUIRES.split("\n").filter(Boolean),
          recommends: ["libayatana-appindicator3.so.1()(64bit)"],
          files: files("/usr/share/zsh/site-functions"),
        },
      },
    },
  };
  require("fs").writeFileSync(`${OUT}/tauri.package.json`, JSON.stringify(config, null, 2));
'
# Bundles the binaries built above as they are (no rebuild); --ci: never prompt.
rm -rf "$release/bundle"
(cd src-tauri && "$tauri" bundle --ci --bundles deb,rpm --config "$out/tauri.package.json")

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
cp "$release/bundle/deb/Engram_${version}_amd64.deb" "$out/engram_${version}_amd64.deb"
cp "$release/bundle/rpm/Engram-${version}-1.x86_64.rpm" "$out/engram-${version}-1.x86_64.rpm"

step "Packages"
for package in "$out"/engram*.deb "$out"/engram*.rpm; do
  printf '  %s  %s\n' "$(du -h "$package" | cut -f1)" "${package#"$root"/}"
done
dpkg-deb --field "$out/engram_${version}_amd64.deb" Package Version Installed-Size Depends Recommends |
  sed 's/^/  /'
