#!/usr/bin/env bash
# The install test of the .deb `make package` built: installed with apt into a fresh minimal
# Debian 12 root, the way a user would, then used there.
#
#   1. A minimal Debian 12 root (debootstrap --variant=minbase from the Debian mirror this
#      machine uses), made once and kept as a tarball under target/package-test/; every run
#      unpacks a pristine copy. Downloaded .debs are kept too, so a warm run downloads nothing.
#   2. `apt-get install --no-install-recommends ./engram.deb`: only the declared Depends, so the
#      tray's library (a Recommends) is NOT there. `engram` then runs on a Claude home (where,
#      projects, scan, lint, recall, hooks install), the completions and man pages are checked,
#      and the app is started from its .desktop entry's Exec line under Xvfb: its window must
#      come up (the UI's first paint), say on stderr that it has no tray icon, and keep running.
#   3. The Recommends installed (libayatana-appindicator3-1): the app starts again, with its tray.
#   4. The .rpm (no RPM-based root can be made here): its metadata and file list, read with rpm.
#
# Each start leaves a screenshot of the whole screen (Xvfb's frame buffer) in
# target/package-test/, and the app's output next to it. Needs root (chroot, mounts).
set -euo pipefail

cd "$(dirname "$0")/.."
root_dir=$PWD
work=$root_dir/target/package-test
base=$work/bookworm-minbase.tar
archives=$work/apt-archives
chroot_dir=$work/root
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
deb=$root_dir/target/package/engram_${version}_amd64.deb

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }
fail() { echo "package-test: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot and bind mounts): run it with sudo"
[ -f "$deb" ] || fail "$deb is missing: run \`make package\`"
export PATH="$PATH:/usr/sbin:/sbin"
command -v debootstrap >/dev/null || fail "debootstrap is missing: run \`scripts/setup.sh --package-test\`"

# The Debian mirror this machine's apt uses (deb822 sources, else the classic list).
mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

mkdir -p "$work" "$archives"
if [ ! -f "$base" ]; then
  step "A minimal Debian 12 root, from $(mirror) (once; about 3 minutes)"
  scratch=$(mktemp -d "$work/debootstrap.XXXXXX")
  debootstrap --variant=minbase bookworm "$scratch" "$(mirror)"
  tar -C "$scratch" -cf "$base.partial" .
  mv "$base.partial" "$base"
  rm -rf "$scratch"
fi

# Everything mounted into the root, and every process started in it, goes on exit.
mounted=()
app_group=""
xvfb_pid=""
cleanup() {
  [ -n "$app_group" ] && kill -TERM -- "-$app_group" 2>/dev/null || true
  [ -n "$xvfb_pid" ] && kill -TERM "$xvfb_pid" 2>/dev/null || true
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[$i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
bind() {
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounted+=("$2")
}

step "A fresh copy of the root"
rm -rf "$chroot_dir"
mkdir -p "$chroot_dir"
tar -C "$chroot_dir" -xf "$base"
mount -t proc proc "$chroot_dir/proc" && mounted+=("$chroot_dir/proc")
mount -t sysfs sysfs "$chroot_dir/sys" && mounted+=("$chroot_dir/sys")
bind /dev "$chroot_dir/dev"
bind /dev/pts "$chroot_dir/dev/pts"
bind "$archives" "$chroot_dir/var/cache/apt/archives"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
cp "$deb" "$chroot_dir/tmp/"
in_root() { chroot "$chroot_dir" env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

step "apt-get install --no-install-recommends ./$(basename "$deb") (only what it Depends on)"
in_root apt-get update -qq
# Xvfb and a session bus to start the app under: the test's tools, not the package's.
in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" xvfb dbus >/dev/null
in_root dpkg -s engram | sed -n 's/^\(Version\|Depends\|Recommends\): /  \1: /p'
if in_root dpkg -s libayatana-appindicator3-1 >/dev/null 2>&1; then
  fail "libayatana-appindicator3-1 was installed although it is only recommended"
fi

step "engram on a Claude home"
claude=$chroot_dir/root/.claude
project=$claude/projects/-root-demo
mkdir -p "$project/memory" "$chroot_dir/root/demo"
cat >"$project/memory/MEMORY.md" <<'EOF'
- [Testing policy](feedback_testing.md) — integration tests hit a real database, never mocks
EOF
cat >"$project/memory/feedback_testing.md" <<'EOF'
---
name: Testing policy
description: integration tests hit a real database, never mocks
type: feedback
---
Integration tests must hit a real database, not mocks: a mocked migration once hid a broken one.
EOF
printf '%s\n' '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"5b0c7a8e-0000-4000-8000-000000000001","cwd":"/root/demo","timestamp":"2026-11-26T10:00:00.000Z","message":{"role":"user","content":"how should the tests reach the database?"}}' \
  >"$project/5b0c7a8e-0000-4000-8000-000000000001.jsonl"

engram() { chroot "$chroot_dir" env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 NO_COLOR=1 \
  sh -c 'cd /root/demo && exec engram "$@"' engram "$@"; }
expect() { # expect WHAT TEXT OUTPUT
  case "$3" in *"$2"*) echo "  ok: $1" ;; *) fail "$1: expected \"$2\" in: $3" ;; esac
}
expect "engram --version" "engram $version" "$(engram --version)"
expect "where" "/root/.claude/projects/-root-demo/memory" "$(engram where)"
expect "projects --json" '"name": "-root-demo"' "$(engram projects --json)"
expect "scan" "feedback_testing.md" "$(engram scan)"
engram lint >/dev/null || fail "engram lint found errors in a clean memory dir"
echo "  ok: lint"
expect "recall" "feedback_testing.md" "$(engram recall "how should the tests reach the database")"
expect "hooks install" "/usr/bin/engram hook user-prompt-submit" "$(engram hooks install)"
expect "settings.json" '"/usr/bin/engram hook user-prompt-submit"' "$(cat "$claude/settings.json")"
expect "hooks uninstall" "Removed" "$(engram hooks uninstall)"

step "Completions, man pages, licences"
for file in /usr/share/bash-completion/completions/engram /usr/share/zsh/vendor-completions/_engram \
  /usr/share/fish/vendor_completions.d/engram.fish /usr/share/man/man1/engram.1.gz \
  /usr/share/man/man1/engram-dream-run.1.gz /usr/share/doc/engram/copyright \
  /usr/share/doc/engram/gitleaks-LICENSE /usr/share/doc/engram/inter-LICENSE \
  /usr/share/doc/engram/wordfreq-LICENSE; do
  [ -s "$chroot_dir$file" ] || fail "$file is not in the package"
done
# Every bundled third-party file is named in copyright, with its licence (the share-alike data
# most of all: attribution is its condition).
for bundled in gitleaks wordfreq codespell Inter; do
  expect "copyright names $bundled" "$bundled" "$(cat "$chroot_dir/usr/share/doc/engram/copyright")"
done
expect "bash completes" "dream" "$(chroot "$chroot_dir" bash -c \
  'source /usr/share/bash-completion/completions/engram; COMP_WORDS=(engram dr); COMP_CWORD=1;
   _engram engram dr engram; echo "${COMPREPLY[@]}"')"
echo "  ok: $(ls "$chroot_dir/usr/share/man/man1" | grep -c '^engram') man pages"

desktop=$chroot_dir/usr/share/applications/Engram.desktop
[ -f "$desktop" ] || fail "no .desktop entry"
grep -q '^Categories=Development;' "$desktop" || fail "the .desktop entry has no category: $(cat "$desktop")"
grep -q '^Comment=Browse and edit' "$desktop" || fail "the .desktop entry's comment: $(cat "$desktop")"
# The Exec line without its field codes (%U, %f, …), as a launcher runs it.
exec_line=$(sed -n 's/^Exec=//p' "$desktop" | sed 's/ *%[a-zA-Z]//g')
echo "  ok: Engram.desktop, Exec=$exec_line"

# Starts the app from the .desktop entry's Exec line under Xvfb, waits for its window's first
# paint (the UI creates ENGRAM_READY_FILE then), checks it is still running a moment later and
# takes a screenshot. Leaves its output in $work/$1.log and the screenshot in $work/$1.png.
start_app() {
  local name=$1 ready=$chroot_dir/tmp/ready fb=$chroot_dir/tmp/fb log=$work/$1.log
  rm -rf "$ready" "$fb" "$chroot_dir/root/.local/share/engram"
  mkdir -p "$fb"
  chroot "$chroot_dir" Xvfb :77 -screen 0 1280x800x24 -fbdir /tmp/fb -nolisten tcp >"$work/$name.xvfb.log" 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 100); do [ -S "$chroot_dir/tmp/.X11-unix/X77" ] && break; sleep 0.1; done
  setsid chroot "$chroot_dir" env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 DISPLAY=:77 \
    ENGRAM_READY_FILE=/tmp/ready dbus-run-session -- sh -c "exec $exec_line" >"$log" 2>&1 &
  app_group=$!
  # A hang guard, not a timing: a cold WebKit start in a fresh root takes a few seconds.
  for _ in $(seq 600); do
    [ -f "$ready" ] && break
    kill -0 "$app_group" 2>/dev/null || { cat "$log" >&2; fail "$name: the app exited before its window came up"; }
    sleep 0.2
  done
  [ -f "$ready" ] || { cat "$log" >&2; fail "$name: no window within two minutes"; }
  # Let the first screen's data arrive and paint before looking.
  sleep 3
  kill -0 "$app_group" 2>/dev/null || { cat "$log" >&2; fail "$name: the app died after its window came up"; }
  /usr/bin/convert "xwd:$fb/Xvfb_screen0" "$work/$name.png"
  echo "  ok: window up, screenshot target/package-test/$name.png"
  kill -TERM -- "-$app_group" 2>/dev/null || true
  wait "$app_group" 2>/dev/null || true
  app_group=""
  kill -TERM "$xvfb_pid" 2>/dev/null || true
  wait "$xvfb_pid" 2>/dev/null || true
  xvfb_pid=""
}

step "The app, started from Engram.desktop, without the tray's library"
start_app app-no-tray
grep -q "engram-app: No tray icon: neither libayatana-appindicator3.so.1" "$work/app-no-tray.log" ||
  fail "the app did not say it has no tray icon: $(cat "$work/app-no-tray.log")"
echo "  ok: no tray icon, and it says so"

step "The app with the recommended tray library installed"
in_root apt-get install -y -qq --no-install-recommends libayatana-appindicator3-1 >/dev/null
start_app app-tray
if grep -q "No tray icon" "$work/app-tray.log"; then
  fail "the tray library is installed, yet: $(grep "No tray icon" "$work/app-tray.log")"
fi
echo "  ok: started with its tray"

step "The .rpm: dependencies and files"
rpm_file=$root_dir/target/package/engram-${version}-1.x86_64.rpm
command -v rpm >/dev/null || fail "rpm is missing: run \`scripts/setup.sh --package-test\`"
requires=$(rpm -qp --requires "$rpm_file" 2>/dev/null)
for needed in 'libwebkit2gtk-4.1.so.0()(64bit)' 'libgtk-3.so.0()(64bit)' 'libc.so.6(GLIBC_2.34)(64bit)'; do
  expect "rpm requires $needed" "$needed" "$requires"
done
expect "rpm recommends the tray library" "libayatana-appindicator3.so.1()(64bit)" \
  "$(rpm -qp --recommends "$rpm_file" 2>/dev/null)"
files=$(rpm -qplv "$rpm_file" 2>/dev/null)
for file in /usr/bin/engram-app /usr/bin/engram; do
  expect "rpm holds $file, executable" "-rwxr-xr-x" "$(grep " $file\$" <<<"$files" || true)"
done
for file in /usr/share/applications/Engram.desktop /usr/share/man/man1/engram.1.gz \
  /usr/share/bash-completion/completions/engram /usr/share/zsh/site-functions/_engram \
  /usr/share/fish/vendor_completions.d/engram.fish /usr/share/licenses/engram/copyright \
  /usr/share/licenses/engram/gitleaks-LICENSE /usr/share/licenses/engram/inter-LICENSE \
  /usr/share/licenses/engram/wordfreq-LICENSE; do
  expect "rpm holds $file" "$file" "$files"
done

step "Passed"
