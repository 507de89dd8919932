#!/usr/bin/env bash
# Installs what ioshape needs, builds it, records a real workload — copying a
# file with cp, then reading it back in 4 KiB random reads with fio — and
# prints its profile and which benchmark pattern it resembles. Run as root: sudo bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "demo: run as root (sudo bash scripts/demo.sh): tracing needs it" >&2
  exit 1
fi
missing=()
for tool in bpftrace fio; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
go build -o bin/ioshape ./cmd/ioshape

work=$(mktemp -d /var/tmp/ioshape-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
dd if=/dev/urandom of="$work/video.mov" bs=1M count=512 status=none
sync

echo "recording: cp of a 512 MiB file, then 3 s of 4 KiB random reads (cold cache)…" >&2
id=$(bin/ioshape record --cold --label "demo $(date +%H:%M:%S)" -- /bin/sh -c "
  cp '$work/video.mov' '$work/copy.mov' && sync &&
  fio --name=scrub --filename='$work/video.mov' --rw=randread --bs=4k --direct=1 \
      --runtime=3 --time_based --output=/dev/null" | cut -d' ' -f1)
bin/ioshape show "$id"
echo
bin/ioshape classify --top 3 "$id"
echo
bin/ioshape ls
