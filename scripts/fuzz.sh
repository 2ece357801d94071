#!/usr/bin/env bash
# `make fuzz`: runs every libFuzzer target of fuzz/ for FUZZ_SECONDS each (default 600), one at a
# time (the machines here have 2 cores). Needs the nightly toolchain (rustup) and cargo-fuzz,
# which this script installs when missing. Seeds come from fuzz/corpus/<target>/ (checked in);
# what the fuzzer finds interesting grows target/fuzz-corpus/<target>/; a crash fails the run,
# its input saved under fuzz/artifacts/<target>/ and the full output in target/fuzz-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-600}"
targets=(frontmatter index transcript team_key settings_json hook_stdin)
if [ "$#" -gt 0 ]; then targets=("$@"); fi

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo +nightly install cargo-fuzz --locked

mkdir -p target/fuzz-logs
failed=()
for target in "${targets[@]}"; do
  corpus="target/fuzz-corpus/$target"
  log="target/fuzz-logs/$target.log"
  mkdir -p "$corpus"
  echo "== fuzz $target for ${seconds}s"
  status=0
  (cd fuzz && cargo +nightly fuzz run "$target" "../$corpus" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1) >"$log" 2>&1 || status=$?
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|panicked at|ERROR: libFuzzer|Test unit written' "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz $target: FAILED (exit $status); log: $log, inputs: fuzz/artifacts/$target/" >&2
    failed+=("$target")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz findings in: ${failed[*]}" >&2
  exit 1
fi
