#!/usr/bin/env bash
# Where do the block completions ioshape never sees go? Records fio (4 KiB
# random reads, libaio depth 16, two CPU hogs beside it) with the native
# backend while the kernel's own ftrace block events and bpf_stats run,
# then prints: ftrace's issues and completions on the disk, how often the
# kernel ran ioshape's issue and completion programs, the trace's
# unfinished count, and on top of which tasks ftrace saw the completions
# handled. Run as root from the repository: sudo bash scripts/missing-completions.sh
set -euo pipefail
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
work=$(mktemp -d /var/tmp/ioshape-missing.XXXXXX)
trap 'echo 0 > $T/tracing_on; echo 0 > $T/events/block/block_rq_issue/enable; echo 0 > $T/events/block/block_rq_complete/enable; echo 1408 > $T/buffer_size_kb; sysctl -q kernel.bpf_stats_enabled=0; rm -rf "$work"' EXIT
go build -o "$work/ioshape" ./cmd/ioshape
dd if=/dev/urandom of="$work/data" bs=1M count=128 status=none
dev=$(stat -c '%d' "$work/data"); disk=$((dev >> 8)),0
sysctl -q kernel.bpf_stats_enabled=1
echo 0 > $T/tracing_on; echo > $T/trace; echo 200000 > $T/buffer_size_kb
echo 1 > $T/events/block/block_rq_issue/enable; echo 1 > $T/events/block/block_rq_complete/enable
for _ in 1 2; do timeout 12 sh -c 'while :; do :; done' & done
echo 1 > $T/tracing_on
"$work/ioshape" --store "$work/store" record --all --layers block -d 7s -o "$work/t.iotrace" >/dev/null 2>&1 &
rec=$!
sleep 1.5
fio --name=job --filename="$work/data" --size=128M --rw=randread --bs=4k --ioengine=libaio --iodepth=16 \
  --direct=1 --runtime=3 --time_based --output=/dev/null
sleep 1
runs=$(bpftool prog show --json | python3 -c '
import json, sys
n = {p["name"]: p.get("run_cnt", 0) for p in json.load(sys.stdin) if p.get("name") in ("on_rq_issue", "on_rq_complete")}
print(n.get("on_rq_issue", 0), n.get("on_rq_complete", 0))')
wait $rec || true
echo 0 > $T/tracing_on
cp $T/trace "$work/ftrace.txt"
read -r issued completed <<<"$runs"
echo "ftrace on $disk: $(grep -c "block_rq_issue: $disk " "$work/ftrace.txt") issues, $(grep -c "block_rq_complete: $disk " "$work/ftrace.txt") completions (whole recording)"
echo "kernel ran on_rq_issue $issued times, on_rq_complete $completed times: $((issued - completed)) completions not run (so far)"
"$work/ioshape" show --json "$work/t.iotrace" | python3 -c '
import json, sys
t = json.load(sys.stdin)["trace"]
print("trace: %d unfinished, %d recursion misses" % (t["unfinished_requests"], t["probe_misses"]))'
echo "completions on $disk by the task they were handled on top of:"
grep "block_rq_complete: $disk " "$work/ftrace.txt" | awk '{sub(/-[0-9]+$/, "", $1); print $1}' | sort | uniq -c | sort -rn | head -8
