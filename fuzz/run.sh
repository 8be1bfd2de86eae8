#!/usr/bin/env bash
# Run one fuzz target for a while:  fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags...]
# TARGET is a folder of fuzz/corpus (trec_run, trec_qrels, json, jsonl, csv, parquet, gzip, cli).
# New inputs go to $FUZZ_WORK/TARGET (default /tmp/skillret-fuzz-work), never into the committed
# seeds; crashes, hangs and out-of-memory inputs to $FUZZ_WORK/artifacts/TARGET-*.
set -euo pipefail
target=${1:?usage: fuzz/run.sh TARGET [SECONDS] [libFuzzer flags...]}
seconds=${2:-600}
shift $(( $# > 1 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
work=${FUZZ_WORK:-/tmp/skillret-fuzz-work}
mkdir -p "$work/$target" "$work/artifacts"
dict=()
[[ -f "$here/$target.dict" ]] && dict=("-dict=$here/$target.dict")
cd "$here"
exec nice -n 10 python "fuzz_$target.py" "$work/$target" "corpus/$target" \
    -rss_limit_mb=1536 -max_len=65536 -timeout=10 -max_total_time="$seconds" \
    -artifact_prefix="$work/artifacts/$target-" -print_final_stats=1 "${dict[@]}" "$@"
