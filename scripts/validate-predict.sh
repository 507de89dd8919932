#!/usr/bin/env bash
# The validation harness of `ioshape predict` (issue 10). It sets up three
# drives on this kind of machine — the VM disk (a directory under /var/tmp),
# a RAM-backed zram device with ext4, and the VM disk behind a cgroup v1
# blkio throttle (40 MB/s, 1,500 IOPS: a slow USB drive) — benches each,
# records eight real workloads from a cold cache on each, then for every
# ordered pair of drives (A, B) predicts the recording on A for drive B and
# sets it against the recording on B. It prints a Markdown table (workload,
# from, to, predicted, measured, error, headline error) and a summary, and
# removes everything it set up.
#
#   sudo bash scripts/validate-predict.sh           # all of it, about 10 minutes
#   sudo QUICK=1 bash scripts/validate-predict.sh   # two workloads, zram and throttled
#   KEEP_STORE=1 keeps the store (traces, drive profiles) to look into
#   REPEAT=N records each workload N times on each drive (default 3; QUICK: 1):
#   measured is the median of N runs, predicted the median of the N
#   recordings' predictions — single runs on this VM vary by up to 2×
#   DRIVES="vda slow" and WORKLOADS="cp tar-x" narrow the run to those
#
# Run as root on Linux, with fio. A drive that cannot be set up fails the
# run (zram0 in use, no cgroup v1 blkio controller).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root: it sets up drives, benches them and records" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is needed: apt-get install fio" >&2; exit 1; }
go build -o bin/ioshape ./cmd/ioshape
ioshape=$PWD/bin/ioshape

store=$(mktemp -d) vda=$(mktemp -d /var/tmp/ioshape-validate.XXXXXX)
zram=/mnt/ioshape-zram slow=/var/tmp/ioshape-validate-slow cg=/sys/fs/cgroup/blkio/ioshape-validate
cleanup() {
  umount "$zram" 2>/dev/null || true
  [ -n "${zram_set:-}" ] && echo 1 > /sys/block/zram0/reset 2>/dev/null || true
  [ -d "$cg" ] && { cat "$cg/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" > /sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null || true; done; rmdir "$cg" 2>/dev/null || true; }
  if [ -n "${KEEP_STORE:-}" ]; then echo "store kept: $store" >&2; else rm -rf "$store"; fi
  rm -rf "$vda" "$slow"
}
trap cleanup EXIT

# --- the drives ------------------------------------------------------------
modprobe zram 2>/dev/null || true
[ -e /sys/block/zram0 ] || { echo "no zram0 device (modprobe zram)" >&2; exit 1; }
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || { echo "zram0 is busy (in use by something else): free it or 'echo 1 > /sys/block/zram0/reset'" >&2; exit 1; }
echo 4G > /sys/block/zram0/disksize && zram_set=1
mkfs.ext4 -q /dev/zram0
mkdir -p "$zram" && mount /dev/zram0 "$zram"

[ -d /sys/fs/cgroup/blkio ] || { echo "no cgroup v1 blkio controller at /sys/fs/cgroup/blkio" >&2; exit 1; }
mkdir -p "$cg" "$slow"
src=$(findmnt -T /var/tmp -no SOURCE)
root_dev=$(lsblk -no PKNAME "$src" 2>/dev/null || true)
[ -n "$root_dev" ] || root_dev=$(basename "$src")
majmin=$(cat "/sys/block/$root_dev/dev")
for f in read_bps_device write_bps_device; do echo "$majmin 40000000" > "$cg/blkio.throttle.$f"; done
for f in read_iops_device write_iops_device; do echo "$majmin 1500" > "$cg/blkio.throttle.$f"; done
# in_slow runs a command inside the throttled cgroup (its children too).
in_slow() { sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$cg" "$@"; }

drives=(vda zram slow)
declare -A dirs=([vda]=$vda [zram]=$zram [slow]=$slow)
workloads=(cp tar-x grep-r fsync-files cold-start fio-rnd4k fio-seq1m phases)
repeat=${REPEAT:-3}
if [ -n "${QUICK:-}" ]; then drives=(zram slow) workloads=(fio-rnd4k cp) repeat=${REPEAT:-1}; fi
# DRIVES and WORKLOADS narrow a run to some of them, to look into a case.
[ -n "${DRIVES:-}" ] && read -r -a drives <<< "$DRIVES"
[ -n "${WORKLOADS:-}" ] && read -r -a workloads <<< "$WORKLOADS"

run_on() { # drive, command...: the command on that drive
  local d=$1; shift
  if [ "$d" = slow ]; then in_slow "$@"; else "$@"; fi
}

for d in "${drives[@]}"; do
  echo "bench $d" >&2
  run_on "$d" "$ioshape" --store "$store" bench --dir "${dirs[$d]}" --size 512M --runtime 40s --label "$d" >/dev/null 2>&1
done

# --- the workloads ---------------------------------------------------------
tarball=$(mktemp /var/tmp/ioshape-validate-src.XXXXXX.tar)
tar cf "$tarball" -C /usr include 2>/dev/null
trap 'cleanup; rm -f "$tarball"' EXIT

prepare() { # drive: the files the workloads read, written before recording
  local dir=${dirs[$1]}
  fio --name=prep --filename="$dir/data" --size=512M --rw=write --bs=1M --direct=1 --output=/dev/null
  head -c 268435456 /dev/urandom > "$dir/big"
  cp "$tarball" "$dir/src.tar"
  mkdir -p "$dir/tree" && tar xf "$dir/src.tar" -C "$dir/tree"
  cp "$ioshape" "$dir/prog"
  sync
}

command_for() { # workload, dir
  local dir=$2
  case $1 in
    cp)          echo cp "$dir/big" "$dir/big.copy" ;;
    tar-x)       echo sh -c "mkdir '$dir/x' && tar xf '$dir/src.tar' -C '$dir/x' && sync" ;;
    grep-r)      echo grep -r -q no-such-string-zq "$dir/tree" ;;
    fsync-files) echo sh -c "mkdir -p '$dir/small' && for i in \$(seq 300); do dd if=/dev/zero of='$dir/small/f'\$i bs=8k count=1 conv=fsync status=none; done" ;;
    cold-start)  echo "$dir/prog" patterns --json ;;
    fio-rnd4k)   echo fio --name=w --filename="$dir/data" --size=512M --rw=randread --bs=4k --io_size=16M --thinktime=100 --direct=1 --output=/dev/null ;;
    fio-seq1m)   echo fio --name=w --filename="$dir/data" --size=512M --rw=read --bs=1M --io_size=256M --direct=1 --output=/dev/null ;;
    phases)      echo sh -c "cp '$dir/big' '$dir/big.copy2' && sync && fio --name=w --filename='$dir/data' --size=512M --rw=randread --bs=4k --io_size=8M --direct=1 --output=/dev/null" ;;
  esac
}

declare -A measured
median() { python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"; }
for d in "${drives[@]}"; do
  echo "record on $d" >&2
  prepare "$d"
  for w in "${workloads[@]}"; do
    runs=()
    for k in $(seq "$repeat"); do
      # Each run starts from the same state: what the last one wrote is
      # removed (and the removal written out) before recording.
      rm -rf "${dirs[$d]}/big.copy" "${dirs[$d]}/big.copy2" "${dirs[$d]}/small" "${dirs[$d]}/x"
      sync
      read -r -a cmd <<< "$(command_for "$w" "${dirs[$d]}")"
      if [[ ${cmd[0]} == sh ]]; then cmd=(sh -c "${cmd[*]:2}"); fi
      out=$(run_on "$d" "$ioshape" --store "$store" record --cold --label "$w-$d-$k" --json -- "${cmd[@]}" 2>/dev/null || true)
      runs+=("$(sed -n 's/.*"duration_s": \([0-9.]*\).*/\1/p' <<< "$out")")
      [ -n "${runs[-1]}" ] || { echo "recording $w on $d failed" >&2; exit 1; }
    done
    measured[$w-$d]=$(median "${runs[@]}")
  done
done

# --- predictions against measurements --------------------------------------
echo "| workload | from | to | predicted | measured | error | headline | headline error |"
echo "|---|---|---|---|---|---|---|---|"
errors=$(mktemp)
for w in "${workloads[@]}"; do
  for from in "${drives[@]}"; do
    for to in "${drives[@]}"; do
      for k in $(seq "$repeat"); do
        "$ioshape" --store "$store" predict --json --drive "$to" "$w-$from-$k"
      done |
        python3 -c '
import json, statistics, sys
dec, text, rs = json.JSONDecoder(), sys.stdin.read(), []
while text.strip():
    r, n = dec.raw_decode(text.strip())
    rs.append(r)
    text = text.strip()[n:]
w, a, b, m = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
p = statistics.median(r["predicted_s"] for r in rs)
h = statistics.median(r["headline_s"] for r in rs)
print("| %s | %s | %s | %.3f s | %.3f s | %+.0f %% | %.3f s | %+.0f %% |" % (w, a, b, p, m, (p/m-1)*100, h, (h/m-1)*100))
print(p/m, h/m, file=open(sys.argv[5], "a"))' "$w" "$from" "$to" "${measured[$w-$to]}" "$errors"
    done
  done
done
python3 - "$errors" <<'EOF'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
err = [abs(p - 1) for p, _ in rows]
herr = [abs(h - 1) for _, h in rows]
worst = max(max(p, 1 / p) for p, _ in rows)
print()
print("cases %d: median |predicted/measured - 1| %.0f %%, worst off by %.2fx, beyond 2x: %d; headline median %.0f %%"
      % (len(rows), 100 * statistics.median(err), worst, sum(max(p, 1 / p) > 2 for p, _ in rows), 100 * statistics.median(herr)))
EOF
rm -f "$errors"
