#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of EventStore.
#
#   Tools/Fuzz/run.sh [--short|--long|--seconds N] [--build-only] [target...]
#
# Targets: event-binary (binary event, item-state and item-record view, configuration-record and index run directory and block decoders), event-json (JSON parser and
# event JSON form), tokenizer (search tokenizer), segment (the search index's posting lists,
# segment directory and document entries). Default: all, 60 s each (--short: 10 s,
# --long: 600 s). Corpora live in Tools/Fuzz/Corpus/<target>/ (new inputs found are added to a
# scratch copy, not to the repository). Crashes are written to .build-fuzz/artifacts/<target>/;
# keep one as a regression test in Tests/ResilienceTests/FuzzRegressionTests.swift.
#
# How it builds: EventStore and its dependencies are compiled with coverage instrumentation
# (`-sanitize=fuzzer`) in a separate scratch directory (.build-fuzz, debug, testing enabled),
# then each target is linked with libFuzzer's main by swiftc.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
scratch="$root/.build-fuzz"
seconds=60
build_only=0
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --short) seconds=10 ;;
        --long) seconds=600 ;;
        --seconds) seconds="$2"; shift ;;
        --build-only) build_only=1 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) targets+=("$1") ;;
    esac
    shift
done
[[ ${#targets[@]} -eq 0 ]] && targets=(event-binary event-json tokenizer segment)

# Reuse the package's checkouts so the fuzz build needs no network.
if [[ ! -d "$scratch/checkouts" && -d "$root/.build/checkouts" ]]; then
    mkdir -p "$scratch"
    cp -R "$root/.build/checkouts" "$scratch/checkouts"
    cp "$root/.build/workspace-state.json" "$scratch/" 2>/dev/null || true
fi

echo "== building EventStore with -sanitize=fuzzer"
swift build --scratch-path "$scratch" -c debug --target EventStore \
    -Xswiftc -sanitize=fuzzer -Xswiftc -enable-testing
bin="$scratch/debug"
objects=()
for module in EventStore LMDB Logging; do
    for object in "$bin/$module.build/"*.o; do objects+=("$object"); done
done

mkdir -p "$scratch/fuzzers"
for target in "${targets[@]}"; do
    source="$root/Tools/Fuzz/Targets/$target.swift"
    [[ -f "$source" ]] || { echo "unknown target $target" >&2; exit 2; }
    echo "== linking $target"
    swiftc -sanitize=fuzzer -parse-as-library -enable-testing -g \
        -I "$bin/Modules" -I "$root/Sources/CLMDB" \
        "$source" "${objects[@]}" -llmdb -o "$scratch/fuzzers/$target"
done
[[ $build_only -eq 1 ]] && exit 0

# Let libFuzzer (not the Swift backtracer) handle crashes, so the input is saved.
export SWIFT_BACKTRACE=enable=no
status=0
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    artifacts="$scratch/artifacts/$target/"
    mkdir -p "$corpus" "$artifacts"
    cp -n "$root/Tools/Fuzz/Corpus/$target/"* "$corpus/" 2>/dev/null || true
    echo "== fuzzing $target for $seconds s"
    if ! "$scratch/fuzzers/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" 2>&1 | tee "$scratch/$target.log" | grep -E '^(#[0-9]+ +DONE|stat::|==|SUMMARY|.*Test unit written)'; then
        :
    fi
    if ls "$artifacts" | grep -q .; then
        echo "!! $target: crashing inputs in $artifacts"
        status=1
    fi
done
exit $status
