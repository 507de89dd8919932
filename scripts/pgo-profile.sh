#!/bin/bash
# Regenerates cmd/ioshape/default.pgo, the CPU profile the Go toolchain
# uses to optimise ioshape's build (profile-guided optimisation), from the
# offline commands whose speed matters most on a long trace: show, report
# and classify of the generated 10 M-event trace the benchmarks read.
#
#   bash scripts/pgo-profile.sh
#
# Refresh it after large changes to the profile, classify or tracefile
# packages; `go build` picks it up by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The benchmark writes its generated trace into IOSHAPE_BENCH_DIR.
IOSHAPE_BENCH_DIR=$dir go test ./internal/analysis -run '^$' -bench 'LoadProfile/events=10000000' -benchtime 1x >/dev/null
trace=$(ls "$dir"/*10000000.iotrace)
go build -pgo=off -o "$dir/ioshape" ./cmd/ioshape
IOSHAPE_CPUPROFILE=$dir/show.prof "$dir/ioshape" show --json "$trace" >/dev/null
IOSHAPE_CPUPROFILE=$dir/report.prof "$dir/ioshape" report -o "$dir/r.html" "$trace" >/dev/null
IOSHAPE_CPUPROFILE=$dir/classify.prof "$dir/ioshape" classify --json "$trace" >/dev/null
go tool pprof -proto "$dir/show.prof" "$dir/report.prof" "$dir/classify.prof" >cmd/ioshape/default.pgo
echo "wrote cmd/ioshape/default.pgo"
