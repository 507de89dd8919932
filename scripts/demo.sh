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
if [ "$(uname)" = Linux ]; then
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
fi
go build -o bin/ioshape ./cmd/ioshape

work=$(mktemp -d /var/tmp/ioshape-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
head -c 536870912 /dev/urandom > "$work/video.mov"
sync

if command -v fio >/dev/null 2>&1; then
  reads="fio --name=scrub --filename='$work/video.mov' --rw=randread --bs=4k --direct=1 --runtime=3 --time_based --output=/dev/null"
  what="then 3 s of 4 KiB random reads"
else # macOS without fio: read the copy back in 4 KiB pieces
  reads="dd if='$work/copy.mov' of=/dev/null bs=4096 2>/dev/null"
  what="then read back in 4 KiB pieces"
fi
echo "recording: cp of a 512 MiB file, $what (cold cache)…" >&2
id=$(bin/ioshape record --cold --label "demo $(date +%H:%M:%S)" -- /bin/sh -c "
  cp '$work/video.mov' '$work/copy.mov' && sync && $reads" | cut -d' ' -f1)
bin/ioshape show "$id"
echo
bin/ioshape classify --top 3 "$id"
echo
bin/ioshape report -o ioshape-demo.html "$id" >/dev/null
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" ioshape-demo.html
echo "HTML report: $PWD/ioshape-demo.html (or browse every trace with: bin/ioshape serve)"
echo
bin/ioshape ls
