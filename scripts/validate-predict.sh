#!/usr/bin/env bash
# The validation harness of `ioshape predict`. It sets up the validation
# drives with scripts/validation-drives.sh — the VM disk, zram, the VM disk
# behind a cgroup v1 blkio throttle, and two models served as real block
# devices: a portable HDD (seek by distance, rotation, one command at a
# time) and a single-command USB bridge in front of flash — benches each,
# records eleven real workloads on each (cold), then for every ordered pair
# of drives (A, B) predicts the recordings on A for drive B and sets them
# against the recordings on B. It prints a Markdown table (workload, from,
# to, predicted, measured, error, headline error) and a summary, overall
# and per drive class. Then the buyer's question: each drive measured
# only with CrystalDiskMark 8's default tests (fio, written as
# CrystalDiskMark's text and read by `ioshape drives import`), every
# recording predicted from those eight numbers alone on every drive — a
# second table with each prediction's range, and how often the range holds
# the measured time, the drives come in the right order (beside the
# headline's order) and the number named as tracked is the one whose
# ratio between drives follows the measured times'. It tears the drives
# down (also after a failure).
#
#   sudo bash scripts/validate-predict.sh           # all of it: about 90 minutes
#   sudo QUICK=1 bash scripts/validate-predict.sh   # a program's start and cp, zram and the HDD model
#   ONE_BENCH=1 benches each drive once, before its first round (about 60
#   minutes): every round predicted with that profile
#   KEEP_STORE=1 keeps the store (traces, drive profiles) to look into
#   REPEAT=N records each workload N times on each drive (default 3):
#   measured is the median of N runs, predicted the median of the N
#   recordings' predictions — single runs on this VM vary by up to 2×
#   DRIVES="vda hdd" and WORKLOADS="cp scrub" narrow the run to those
#   PROFILES=DIR benches no drive: it takes the drive profiles (and the
#   CrystalDiskMark texts) of a store a run kept, and records anew — to see
#   a change to the recordings (what the tracers keep) in minutes, not an hour
#   PREDICT_STORE=DIR predicts again on a store a run kept (KEEP_STORE=1):
#   no drives, benches or recordings — its profiles (the CrystalDiskMark
#   texts imported anew) and traces, against the times it measured; about
#   7 minutes, to see what a change to the model does
#
# Run as root on Linux, with fio (and ffmpeg and Chromium for the scrubbing
# and program-start workloads). A drive that cannot be set up fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root: it sets up drives, benches them and records" >&2; exit 1; }
for t in fio python3; do
  command -v "$t" >/dev/null || { echo "$t is needed (apt-get install $t)" >&2; exit 1; }
done
go build -o bin/ioshape ./cmd/ioshape
ioshape=$PWD/bin/ioshape

store=${PREDICT_STORE:-$(mktemp -d)}
# A VM that reports its free pages to the host (virtio-balloon free page
# reporting) gives them back: a page cache refilled after the cache is
# dropped then pays the host's page faults, and the same cp of 256 MiB on
# the VM disk took 0.20 to 0.57 s, run to run (0.91 s of system time where
# 0.10 was the copy's). The harness stops the reporting while it runs
# (an order above the largest) and puts it back after. Where the kernel
# also says how long a freed page stays before it may go back
# (page_reporting's min_free_ms, 0 on this project's VMs), it holds them
# two minutes: the 2 GiB touched and freed before each recording are the
# page cache a long recording fills, not pages the host took back during
# it (cp of 256 MiB on the USB model, 9 s: 184-190 ms on the CPU with 0,
# 135-150 ms with two minutes; 89-141 ms on the VM disk).
#
# A VM may also run DAMON with a pageout scheme (this one: unmapped pages
# not touched for 60 s, up to 128 MiB/s): it evicts the files a workload
# was prepared with, or a drive's pages, at whatever moment a page turns
# 60 s old, so that two runs of one workload read different amounts from
# their drive. The harness turns every running kdamond off while it runs
# and back on after.
reporting=/sys/module/page_reporting/parameters/page_reporting_order
reporting_was=
freed_hold=/sys/module/page_reporting/parameters/min_free_ms
freed_hold_was=
damons_stopped=()
cleanup() {
  [ -n "$reporting_was" ] && { echo "$reporting_was" > "$reporting" || true; }
  [ -n "$freed_hold_was" ] && { echo "$freed_hold_was" > "$freed_hold" || true; }
  for k in "${damons_stopped[@]}"; do echo on 2>/dev/null > "$k/state" || true; done
  [ -n "${PREDICT_STORE:-}" ] && return
  bash scripts/validation-drives.sh down
  if [ -n "${KEEP_STORE:-}" ]; then echo "store kept: $store" >&2; else rm -rf "$store"; fi
}
trap cleanup EXIT
if [ -z "${PREDICT_STORE:-}" ] && [ -w "$reporting" ]; then
  reporting_was=$(cat "$reporting")
  echo 11 2>/dev/null > "$reporting" || reporting_was= # a kernel that takes no order above its largest
fi
if [ -z "${PREDICT_STORE:-}" ] && [ -w "$freed_hold" ]; then
  freed_hold_was=$(cat "$freed_hold")
  echo 120000 2>/dev/null > "$freed_hold" || freed_hold_was=
fi
if [ -z "${PREDICT_STORE:-}" ]; then
  for k in /sys/kernel/mm/damon/admin/kdamonds/*; do
    [ "$(cat "$k/state" 2>/dev/null)" = on ] || continue
    echo off 2>/dev/null > "$k/state" && damons_stopped+=("$k")
  done
fi

# --- the drives ------------------------------------------------------------
drives=(vda zram slow hdd usb)
workloads=(cp tar-x grep-r fsync-files cold-start fio-rnd4k fio-seq1m phases scrub small-copy big-start)
repeat=${REPEAT:-3}
bench_runtime=40s bench_size=512M cdm_runtime=5 cdm_size=1g
# QUICK: three runs of each (one, on a busy minute of the host, put a
# program's start on zram at 0.88 s against its usual 0.25: the HDD
# model's 0.60 came out faster), each drive benched once.
if [ -n "${QUICK:-}" ]; then drives=(zram hdd) workloads=(cold-start cp) repeat=${REPEAT:-3} bench_runtime=10s bench_size=256M cdm_runtime=2 cdm_size=256m; ONE_BENCH=${ONE_BENCH-1}; fi
# DRIVES and WORKLOADS narrow a run to some of them, to look into a case.
[ -n "${DRIVES:-}" ] && read -r -a drives <<< "$DRIVES"
[ -n "${WORKLOADS:-}" ] && read -r -a workloads <<< "$WORKLOADS"

declare -A dirs cgroups measured
round_label() { # drive, round: the name bench_drive gives that round's profile
  if [ "$2" -gt 1 ]; then echo "$1-r$2"; else echo "$1"; fi
}
# profile_of: a round's drive profile (a store kept before drives were
# benched each round has one a drive).
profile_of() { # drive, round: the profile that round's recordings are predicted with
  local label; label=$(round_label "$1" "$2")
  if [ -f "$store/drives/$label.json" ]; then echo "$label"; else echo "$1"; fi
}
if [ -n "${PREDICT_STORE:-}" ]; then
  [ -f "$store/measured.tsv" ] || { echo "$store: no measured.tsv (a store a run kept with KEEP_STORE=1)" >&2; exit 1; }
  while read -r name dir; do dirs[$name]=$dir; done < "$store/dirs.tsv"
  while read -r key value; do measured[$key]=$value; done < "$store/measured.tsv"
  for d in "${drives[@]}"; do "$ioshape" --store "$store" drives import --label "cdm-$d" "$store/cdm-$d.txt" >/dev/null; done
else
up=$(bash scripts/validation-drives.sh up "${drives[@]}") || exit 1
while read -r name dir cgroup; do
  dirs[$name]=$dir
  cgroups[$name]=${cgroup:-}
  echo "$name $dir" >> "$store/dirs.tsv"
done <<< "$up"

run_on() { # drive, command...: the command on that drive (inside its cgroup)
  local d=$1; shift
  if [ -n "${cgroups[$d]}" ]; then
    sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "${cgroups[$d]}" "$@"
  else
    "$@"
  fi
}

if [ -n "${PROFILES:-}" ]; then
  for d in "${drives[@]}"; do
    for f in "$PROFILES/drives/$d.json" "$PROFILES/cdm-$d.json" "$PROFILES/cdm-$d.txt"; do
      [ -f "$f" ] || { echo "$PROFILES: no $(basename "$f") (a store a run kept with KEEP_STORE=1)" >&2; exit 1; }
    done
  done
fi
# probe: how long this machine takes for a fixed computation now (ms, the
# best of three), printed beside each stage: the VM's speed moves.
probe() { python3 -c '
import time
best = 1e9
for _ in range(3):
    t = time.perf_counter(); s = 0
    for i in range(1000000): s += i
    best = min(best, time.perf_counter() - t)
print("%.0f ms" % (best * 1e3))'; }
# stolen: how much of a second a CPU spinning on the clock lost (ms, gaps
# over 100 µs): a virtual machine's host taking its CPUs away. It varies
# from run to run (2–18 ms a second here on a quiet day) and lengthens
# whatever computes then — a slow drive's long recordings most.
stolen() { python3 -c '
import time
start = last = time.perf_counter(); lost = 0.0
while last - start < 1:
    now = time.perf_counter()
    if now - last > 100e-6: lost += now - last
    last = now
print("%.1f" % (lost / (last - start) * 1e3))'; }
# steal_ms: the CPUs' time the host took since boot (ms, summed over the
# CPUs), as the kernel counts it where the hypervisor tells it (KVM's steal
# time: /proc/stat's eighth figure; 0 where it does not).
steal_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print $9 * 1000 / hz; exit}' /proc/stat; }
# Each drive is benched before each round's recordings on it (ONE_BENCH=1:
# before the first only), and a round's recordings are predicted with the
# profiles of its own round: the VM disk is a host's file whose speed
# moves over tens of minutes (4 KiB reads at 154 us in a bench, 74-83 in
# the recordings half an hour later), and a profile taken in another
# stretch put every prediction onto that drive 19-27 % long. A user
# benches the drive they have now; so does each round. The first round's
# profile is the drive's name, a later round's the name and -rK.
bench_drive() { # drive, round
  local d=$1 k=$2
  echo "bench $d, round $k (CPU probe $(probe))" >&2
  run_on "$d" "$ioshape" --store "$store" bench --dir "${dirs[$d]}" --size "$bench_size" --runtime "$bench_runtime" --label "$(round_label "$d" "$k")" >/dev/null 2>&1 ||
    { echo "bench on $d failed" >&2; exit 1; }
}

# CrystalDiskMark 8's default tests (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1,
# RND4K Q1T1; reads, then writes) with fio on each drive, written as
# CrystalDiskMark's text and imported: the drive as a review gives it.
cdm_jobs=()
for op in read write; do
  if [ $op = read ]; then rr=randread; else rr=randwrite; fi
  cdm_jobs+=(--name=SEQ1M-Q8T1-$op --stonewall --rw=$op --bs=1M --iodepth=8
             --name=SEQ1M-Q1T1-$op --stonewall --rw=$op --bs=1M --iodepth=1
             --name=RND4K-Q32T1-$op --stonewall --rw=$rr --bs=4k --iodepth=32
             --name=RND4K-Q1T1-$op --stonewall --rw=$rr --bs=4k --iodepth=1)
done
for d in "${drives[@]}"; do
  if [ -n "${PROFILES:-}" ]; then
    mkdir -p "$store/drives"
    cp "$PROFILES/drives/$d.json" "$store/drives/$d.json"
    for k in $(seq 2 "$repeat"); do
      f=$PROFILES/drives/$(round_label "$d" "$k").json
      if [ -f "$f" ]; then cp "$f" "$store/drives/"; fi
    done
    cp "$PROFILES/cdm-$d.json" "$PROFILES/cdm-$d.txt" "$store/"
    "$ioshape" --store "$store" drives import --label "cdm-$d" "$store/cdm-$d.txt" >/dev/null
    continue
  fi
  echo "CrystalDiskMark's tests on $d" >&2
  run_on "$d" fio --output-format=json --filename="${dirs[$d]}/cdm.dat" --size="$cdm_size" --direct=1 --ioengine=libaio \
    --runtime="$cdm_runtime" --time_based "${cdm_jobs[@]}" > "$store/cdm-$d.json" 2>/dev/null
  rm -f "${dirs[$d]}/cdm.dat"
  python3 scripts/cdm-text.py "$store/cdm-$d.json" "validation drive $d" > "$store/cdm-$d.txt"
  "$ioshape" --store "$store" drives import --label "cdm-$d" "$store/cdm-$d.txt" >/dev/null
done

# --- the workloads ---------------------------------------------------------
tarball=$(mktemp /var/tmp/ioshape-validate-src.XXXXXX.tar)
tar cf "$tarball" -C /usr include 2>/dev/null
trap 'cleanup; rm -f "$tarball"' EXIT

wants() { [[ " ${workloads[*]} " == *" $1 "* ]]; }

# A ~1 GB video: 10 s encoded once, joined 44 times without re-encoding.
video=$(mktemp -d /var/tmp/ioshape-validate-video.XXXXXX)
trap 'cleanup; rm -rf "$tarball" "$video"' EXIT
if wants scrub; then
  ffmpeg -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=30 -t 10 -c:v libx264 -preset ultrafast -g 15 \
    -b:v 60M -maxrate 60M -bufsize 60M "$video/seg.mp4"
  for _ in $(seq 44); do echo "file 'seg.mp4'"; done > "$video/list.txt"
  ffmpeg -loglevel error -y -f concat -safe 0 -i "$video/list.txt" -c copy "$video/video.mp4"
fi

prepare() { # drive: the files the workloads read, written before recording
  local dir=${dirs[$1]}
  # The largest first, the random reads' file last: the VM disk's host
  # caches what was written lately, and the bench reads the file it has
  # just written. Written first, fio's file went cold behind the video
  # and Chromium (1.3 GB): its 4 KiB reads at 220-415 us in the rounds'
  # recordings against the bench's 76-103, every prediction of them onto
  # the VM disk 40-52 % short; 60 us without those two files.
  # Each written out before the next: ext4 places a file's blocks when
  # they are written back (delayed allocation) and a new directory by the
  # space it sees free then. Left to one sync at the end, the big files
  # were still being placed as tar made the tree's directories: the tree
  # lay within 256 MiB in some rounds and across 2 GB in others, and cp -r
  # from those onto the HDD model came out +38...+48 %, from the others
  # -2...+4 %.
  if wants scrub; then cp "$video/video.mp4" "$dir/video.mp4" && sync; fi
  # A large program whose own files are on the drive; the system's
  # libraries stay on the VM disk (predicted with --on the drive).
  if wants big-start; then rm -rf "$dir/chromium" && cp -r /usr/lib/chromium "$dir/chromium" && sync; fi
  if wants cp || wants phases; then head -c 268435456 /dev/urandom > "$dir/big" && sync; fi
  if wants tar-x || wants grep-r || wants small-copy; then
    cp "$tarball" "$dir/src.tar" && sync
    mkdir -p "$dir/tree" && tar xf "$dir/src.tar" -C "$dir/tree" && sync
  fi
  cp "$ioshape" "$dir/prog"
  if wants fio-rnd4k || wants fio-seq1m || wants phases; then
    fio --name=prep --filename="$dir/data" --size=512M --rw=write --bs=1M --direct=1 --output=/dev/null
  fi
  sync
}

# evict drops a file from the page cache, leaving everything else cached.
evict() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"; }

# scrub_script writes the scrubbing workload: single frames decoded at 40
# random places of the video, one after another.
scrub_script() {
  local dir=$1
  echo 'for t in 17 391 102 260 33 418 199 75 331 144 9 287 366 121 240 54 405 181 308 88 222 379 12 150 270 46 355 112 428 201 63 317 170 397 28 248 133 341 94 215; do'
  echo "  ffmpeg -loglevel error -nostdin -ss \$t -i '$dir/video.mp4' -frames:v 1 -f null - || exit 1"
  echo 'done'
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
    scrub)       echo sh -c "$(scrub_script "$dir" | tr '\n' ';' | sed 's/do;/do/')" ;;
    small-copy)  echo cp -r "$dir/tree" "$dir/tree.copy" ;;
    big-start)   echo sh -c "exec '$dir/chromium/chromium' --headless --no-sandbox --disable-gpu --dump-dom about:blank >/dev/null" ;;
  esac
}

# cold_flag: how a workload starts cold. Scrubbing happens in a running
# player: ffmpeg is warm, the video is not.
cold_flag() { # workload, dir
  if [ "$1" = scrub ]; then
    ffmpeg -loglevel error -nostdin -ss 1 -i "$2/video.mp4" -frames:v 1 -f null - >/dev/null 2>&1 || true
    evict "$2/video.mp4"
  else
    echo --cold
  fi
}

median() { python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"; }
# The repetitions go round the drives and the workloads: in round k, each
# workload runs on every drive in turn, then the next workload. This VM's
# speed moves over minutes (a day's CPU-bound runs 20-30 % slower than the
# day before's, zram's 1 MiB reads 306 us against 155), and a case sets a
# recording on one drive against runs on another: taken seconds apart,
# both ran at one pace. Recorded drive by drive (all of a round's
# workloads on one drive, then the next drive), they were minutes apart:
# the VM disk's round 2 ran fast throughout (a program's start 0.233 s,
# rounds 1 and 3 0.419 and 0.368; grep -r 0.86 s against 1.35 and 1.37)
# while zram's program start was slowest in its round 2, and a program's
# start came out VM disk→zram +57 %, zram→VM disk -36 %.
# Each round writes the drives' files anew just before recording: the VM
# disk is a host's file whose cache serves data written minutes ago at
# 65-80 us a 4 KiB read and data written long ago at 280 (read once
# before: 136). The bench reads the file it has just written; written
# once before all the rounds, the workloads' files had gone cold by the
# time they were read (the VM disk's block latency 230-290 us in the
# random-read recordings against the bench's 82), and every prediction
# onto the VM disk came out 30-50 % under. The drives are prepared in
# reverse, the VM disk last: its files are the ones most written after.
declare -A runs
for k in $(seq "$repeat"); do
  # Every round on new file systems, as the first: files written again
  # over emptied ones land elsewhere each round, and predict carries one
  # drive's layout to every other. Rewritten in place, zram's 256 MiB file
  # lay in 50-64 pieces (2-6 MiB, far apart) in rounds 2 and 3 (3 in
  # round 1): cp from zram onto the HDD model +72 %, tar -x from zram and
  # the throttle onto it +62 and +53 % (round 1: +4 and -11 %). Emptied
  # first, the throttle's tar -x wrote across 1.3 GB of its file system in
  # round 2, within 128 MB in round 1 (+167 % onto the HDD model against
  # -3 %), and cp -r's copies on zram and the USB model went where other
  # rounds' had not (onto the HDD model +9-11 % in round 1, +100-121 % in
  # round 2).
  if [ -z "${PREDICT_STORE:-}" ]; then bash scripts/validation-drives.sh fresh; fi
  for ((i = ${#drives[@]} - 1; i >= 0; i--)); do
    d=${drives[$i]}
    if [ -z "${PROFILES:-}" ] && { [ "$k" -eq 1 ] || [ -z "${ONE_BENCH:-}" ]; }; then bench_drive "$d" "$k"; fi
    echo "prepare $d" >&2
    prepare "$d"
  done
  lost=$(stolen)
  echo "record round $k of $repeat (CPU probe $(probe), host took $lost ms a second)" >&2
  steal0=$(steal_ms) round0=$(date +%s.%N)
  for w in "${workloads[@]}"; do
    for d in "${drives[@]}"; do
      # Each run starts from the same state: what the last one wrote is
      # removed (and the removal written out) before recording.
      rm -rf "${dirs[$d]}/big.copy" "${dirs[$d]}/big.copy2" "${dirs[$d]}/small" "${dirs[$d]}/x" "${dirs[$d]}/tree.copy"
      sync
      read -r -a cmd <<< "$(command_for "$w" "${dirs[$d]}")"
      if [[ ${cmd[0]} == sh ]]; then cmd=(sh -c "${cmd[*]:2}"); fi
      cold=$(cold_flag "$w" "${dirs[$d]}")
      # Memory the host backs, freed just before: the workload's page
      # cache comes from it, not from pages reported to the host earlier.
      python3 -c 'bytes(1) * (2 << 30)'
      # shellcheck disable=SC2086
      out=$(run_on "$d" "$ioshape" --store "$store" record $cold --label "$w-$d-$k" --json -- "${cmd[@]}" 2>/dev/null || true)
      took=$(sed -n 's/.*"duration_s": \([0-9.]*\).*/\1/p' <<< "$out")
      [ -n "$took" ] || { echo "recording $w on $d failed" >&2; exit 1; }
      runs[$w-$d]+=" $took"
    done
    echo "  $w: round $k on every drive (CPU probe $(probe))" >&2
  done
  # The round's own: the host's steal over its recordings, ms a second.
  echo "all $k $lost $(python3 -c 'import sys; a, b, t0 = map(float, sys.argv[1:]); import time; print("%.1f" % ((b - a) / (time.time() - t0)))' "$steal0" "$(steal_ms)" "$round0")" >> "$store/stolen.tsv"
  # Each drive's pace after the round, against its bench's: 4 KiB random
  # direct reads at one in flight for 2 s over the round's 512 MiB file
  # (the bench's size). After, not before: the VM disk's host caches
  # what was read lately, and the recordings read that file. A bench
  # taken in a slow stretch of the VM disk (4 KiB reads at 154 us, its
  # rounds' pace half that) put every prediction onto it 19-27 % long.
  for d in "${drives[@]}"; do
    if [ -f "${dirs[$d]}/data" ]; then
      run_on "$d" fio --name=check --filename="${dirs[$d]}/data" --size=512M --rw=randread --bs=4k --direct=1 \
        --runtime=2 --time_based --output-format=json 2>/dev/null |
        python3 -c 'import json, sys; print(sys.argv[1], sys.argv[2], "%.1f" % (json.load(sys.stdin)["jobs"][0]["read"]["lat_ns"]["mean"] / 1e3))' "$d" "$k" \
        >> "$store/pace.tsv" || true
    fi
  done
done
for d in "${drives[@]}"; do
  for w in "${workloads[@]}"; do
    # shellcheck disable=SC2086
    measured[$w-$d]=$(median ${runs[$w-$d]})
    echo "$w-$d ${measured[$w-$d]}" >> "$store/measured.tsv"
  done
done
fi

# --- predictions against measurements --------------------------------------
# predict_all: each recording's predictions for every drive named, in one
# pass over its trace (predict takes --drive several times), one JSON object
# a line. The I/O that moves is the drive the workload's files are on (what
# the harness moves between drives): the programs and the system's
# libraries stay on the VM disk.
# Recording k is predicted from its round's profiles (profile_of), its
# predictions named by the drive (the round's suffix dropped); cdm names
# the CrystalDiskMark profiles, one for all rounds.
profile_in() { # bench or cdm, drive, round
  if [ "$1" = cdm ]; then echo "cdm-$2"; else profile_of "$2" "$3"; fi
}
predict_all() { # workload, recorded on, bench or cdm
  local w=$1 from=$2 kind=$3 flags to
  for k in $(seq "$repeat"); do
    flags=(--from "$(profile_in "$kind" "$from" "$k")")
    for to in "${drives[@]}"; do flags+=(--drive "$(profile_in "$kind" "$to" "$k")"); done
    "$ioshape" --store "$store" predict --json "${flags[@]}" --on "${dirs[$from]}" "$w-$from-$k" |
      python3 -c '
import json, re, sys
r = json.load(sys.stdin)
for d in r.get("drives", [r]):
    d["drive"] = re.sub(r"-r[0-9]+$", "", d["drive"])
    print(json.dumps(d))'
  done
}

# predictions: the lines of predict_all's output for one drive.
predictions() { # drive, predict_all's output
  python3 -c 'import json, sys; [print(l, end="") for l in open(sys.argv[2]) if json.loads(l)["drive"] == sys.argv[1]]' "$1" "$2"
}
echo "| workload | from | to | predicted | measured | error | headline | headline error |"
echo "|---|---|---|---|---|---|---|---|"
errors=$(mktemp)
percase=$(mktemp)
all=$(mktemp)
for w in "${workloads[@]}"; do
  for from in "${drives[@]}"; do
    predict_all "$w" "$from" bench > "$all"
    for to in "${drives[@]}"; do
      predictions "$to" "$all" |
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
print(p/m, h/m, b, file=open(sys.argv[5], "a"))
print(json.dumps({"w": w, "from": a, "to": b, "predicted": [r["predicted_s"] for r in rs]}), file=open(sys.argv[6], "a"))' "$w" "$from" "$to" "${measured[$w-$to]}" "$errors" "$percase"
    done
  done
done
python3 - "$errors" <<'EOF'
import statistics, sys
rows = [(float(p), float(h), to) for p, h, to in (l.split() for l in open(sys.argv[1]))]
def summary(name, rs):
    err = [abs(p - 1) for p, _, _ in rs]
    herr = [abs(h - 1) for _, h, _ in rs]
    worst = max(max(p, 1 / p) for p, _, _ in rs)
    print("%s: %d cases, median |predicted/measured - 1| %.0f %%, worst off by %.2fx, beyond 1.5x: %d, beyond 2x: %d; headline median %.0f %%"
          % (name, len(rs), 100 * statistics.median(err), worst, sum(max(p, 1 / p) > 1.5 for p, _, _ in rs),
             sum(max(p, 1 / p) > 2 for p, _, _ in rs), 100 * statistics.median(herr)))
print()
summary("all", rows)
for to in sorted({t for _, _, t in rows}):
    summary("to " + to, [r for r in rows if r[2] == to])
EOF
rm -f "$errors"
# The same cases from the recordings the host left alone: predict notes a
# recording during which the host took more than 5 % of the CPUs' time
# (its computation ran slower than the work's own); here each case's
# predictions and measured runs are those of recordings under it, where
# each side has one. Every recording's time and the host's share come
# from the store.
"$ioshape" --store "$store" ls --json |
  python3 -c 'import json, sys; [print(t["id"], t.get("label", "")) for t in json.load(sys.stdin)]' |
  while read -r id label; do
    [ -n "$label" ] || continue
    "$ioshape" --store "$store" show --json "$id" | python3 -c '
import json, sys
t = json.load(sys.stdin)["trace"]
print(sys.argv[1], t["duration_s"], t.get("host_steal_s", 0) / max(t["duration_s"], 1e-3) / max(t.get("cpus", 1), 1))' "$label"
  done > "$percase.host"
python3 - "$percase" "$percase.host" "$repeat" <<'EOF'
import json, statistics, sys
host = {}
for l in open(sys.argv[2]):
    label, took, share = l.split()
    host[label] = (float(took), float(share))
repeat, quiet = int(sys.argv[3]), lambda label: label in host and host[label][1] <= 0.05
rows, left = [], 0
for l in open(sys.argv[1]):
    c = json.loads(l)
    preds = [p for k, p in enumerate(c["predicted"], 1) if quiet("%s-%s-%d" % (c["w"], c["from"], k))]
    runs = [host["%s-%s-%d" % (c["w"], c["to"], k)][0] for k in range(1, repeat + 1) if quiet("%s-%s-%d" % (c["w"], c["to"], k))]
    if not preds or not runs:
        left += 1
        continue
    rows.append((statistics.median(preds) / statistics.median(runs), c["to"], "%s %s→%s" % (c["w"], c["from"], c["to"])))
disturbed = sum(s > 0.05 for _, s in host.values())
if rows:
    err = [abs(r - 1) for r, _, _ in rows]
    far = lambda x: sum(max(r, 1 / r) > x for r, _, _ in rows)
    print("recordings the host left alone (took 5 %% of the CPUs' time or less; %d of %d were over): %d cases, median |predicted/measured - 1| %.0f %%, worst off by %.2fx, beyond 1.5x: %d, beyond 2x: %d; %d cases without such a recording on one side"
          % (disturbed, len(host), len(rows), 100 * statistics.median(err), max(max(r, 1 / r) for r, _, _ in rows), far(1.5), far(2), left))
    for r, _, case in sorted(rows, key=lambda x: -max(x[0], 1 / x[0])):
        if max(r, 1 / r) > 1.5:
            print("  beyond 1.5x there: %s %+.0f %%" % (case, 100 * (r - 1)))
EOF
rm -f "$percase" "$percase.host"
if [ -s "$store/stolen.tsv" ]; then
  python3 - "$store/stolen.tsv" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) in (3, 4)]
lost = [float(r[2]) for r in rows]
line = ("host: a CPU spinning before each round's recordings lost %.1f ms a second to the host (median of %d, %.1f-%.1f)"
        % (statistics.median(lost), len(lost), min(lost), max(lost)))
steal = [float(r[3]) for r in rows if len(r) == 4]
if steal:
    line += "; the kernel counted %.1f ms a second of the CPUs' time stolen during the recordings (%.1f-%.1f)" % (
        statistics.median(steal), min(steal), max(steal))
print(line)
EOF
fi

if [ -s "$store/pace.tsv" ]; then
  python3 - "$store/pace.tsv" "$store/drives" <<'EOF'
import json, os, sys
rounds = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 3:
        rounds.setdefault(f[0], []).append((int(f[1]), float(f[2])))
def bench(d, k):
    """the round's bench of 4 KiB random reads at one in flight (profile_of's profile)"""
    for name in ([d + "-r%d" % k] if k > 1 else []) + [d]:
        try:
            for p in json.load(open(os.path.join(sys.argv[2], name + ".json")))["points"]:
                if (p["op"], p["access"], p["size_bytes"], p["depth"], p.get("jobs", 1)) == ("read", "rand", 4096, 1, 1):
                    return p["lat_mean_us"]
        except (OSError, ValueError, KeyError):
            pass
    return None
parts = []
for d, lat in rounds.items():
    part = "%s %s us" % (d, "/".join("%.0f" % v for _, v in lat))
    benches = [bench(d, k) for k, _ in lat]
    if all(benches):
        far = ["%.2fx" % (b / v) for b, (_, v) in zip(benches, lat) if b / v > 1.25 or b / v < 0.8]
        part += " (bench %s%s)" % ("/".join("%.0f" % b for b in benches), ": " + ", ".join(far) if far else "")
    parts.append(part)
print("drives' pace: 4 KiB random reads after each round, against its bench's: " + "; ".join(parts))
EOF
fi

# --- the buyer's question: from CrystalDiskMark's eight numbers ------------
echo
echo "From CrystalDiskMark's eight numbers only (both drives imported from its text):"
echo
echo "| workload | from | to | predicted | range | measured | error | in range | headline | tracks |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cases=$(mktemp)
for w in "${workloads[@]}"; do
  for from in "${drives[@]}"; do
    predict_all "$w" "$from" cdm > "$all"
    for to in "${drives[@]}"; do
      predictions "cdm-$to" "$all" |
        python3 -c '
import collections, json, statistics, sys
dec, text, rs = json.JSONDecoder(), sys.stdin.read(), []
while text.strip():
    r, n = dec.raw_decode(text.strip())
    rs.append(r)
    text = text.strip()[n:]
w, a, b, m = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
med = lambda k: statistics.median(r[k] for r in rs)
p, lo, hi, h = med("predicted_s"), med("predicted_low_s"), med("predicted_high_s"), med("headline_s")
tracks = collections.Counter(r["tracks"] for r in rs).most_common(1)[0][0]
print("| %s | %s | %s | %.3f s | %.3f–%.3f s | %.3f s | %+.0f %% | %s | %.3f s | %s |" % (w, a, b, p, lo, hi, m, (p/m-1)*100, "yes" if lo <= m <= hi else "no", h, tracks))
print(json.dumps({"w": w, "from": a, "to": b, "p": p, "lo": lo, "hi": hi, "m": m, "h": h, "tracks": tracks}), file=open(sys.argv[5], "a"))' "$w" "$from" "$to" "${measured[$w-$to]}" "$cases"
    done
  done
done
"$ioshape" --store "$store" drives --json > "$store/drives.json"
python3 scripts/cdm-summary.py "$cases" "$store/drives.json"
rm -f "$cases" "$all"
