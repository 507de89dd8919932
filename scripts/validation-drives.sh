#!/usr/bin/env bash
# Sets up, lists and tears down the drives `ioshape predict` is validated
# on, each a real block device (or a partition of one) that the block
# layer, readahead, merging and writeback act on:
#
#   vda    the VM disk: the first partition of a loop device with direct
#          I/O over a file on it (written through once, never discarded),
#          with the disk's queue settings (readahead, scheduler) and its own
#          ext4 — so that what a program touches on the root file system
#          (its libraries, its profile, /tmp) stays off the drive measured,
#          as it does for every other drive, and every drive has the same
#          fresh file system (the root's has fast commits: one flush per
#          fsync, where a fresh ext4 writes its journal and flushes twice)
#   zram   a RAM disk (zram0) with ext4
#   slow   the same device as vda (its second partition, with its own
#          ext4: neither drive's files move the other's), behind a cgroup
#          v1 blkio throttle (40 MB/s, 1,500 IOPS): v1 does not throttle
#          the flushers' writeback, which predict knows by finding vda's
#          profile of the same device; run workloads inside it with:
#          sh -c 'echo $$ > CGROUP/cgroup.procs; exec CMD'
#   hdd    a portable HDD: a loop device with direct I/O over a file that
#          tools/drivesim serves over FUSE, delaying each request by seek
#          distance and rotation (5,400 rpm, 1–20 ms seeks, 100 MB/s, 8 MiB
#          read cache, one command at a time, 2.5 MiB readahead), with ext4;
#          its queue is the host's (mq-deadline; 4 requests at the device)
#   usb    a single-command USB bridge in front of flash (1 ms a command,
#          40 MB/s, 128 KiB readahead), the same way
#
#   sudo bash scripts/validation-drives.sh up [DRIVE…]   # prints "NAME DIR [CGROUP]" per drive
#   sudo bash scripts/validation-drives.sh list
#   sudo bash scripts/validation-drives.sh fresh          # a new file system on each drive that is up
#   sudo bash scripts/validation-drives.sh down           # all of them, whatever state they are in
#
# DRIVESIM_HDD and DRIVESIM_USB add flags to the models (e.g.
# DRIVESIM_HDD="--rpm 7200 --full-stroke 15ms"); DRIVESIM_SIZE is the
# size in bytes of every loop-backed drive (4 GiB; the VM disk's file,
# which vda and slow share, twice that: a partition each). A drive that
# cannot be set up fails `up`, which tears down what it made before
# failing.
set -euo pipefail
shopt -s inherit_errexit # the functions whose output is captured stop at a failure too
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "validation-drives: run as root: it makes devices and mounts" >&2; exit 1; }

state=/run/ioshape-validation-drives
base=/var/tmp/ioshape-validation
cg=/sys/fs/cgroup/blkio/ioshape-validation
all=(vda zram slow hdd usb)

down() {
  for m in vda slow hdd usb disk; do
    if mountpoint -q "$base/$m"; then umount "$base/$m" || umount -l "$base/$m" || true; fi
    if [ -f "$state/$m.loop" ]; then losetup -d "$(cat "$state/$m.loop")" 2>/dev/null || true; fi
    if [ -f "$state/$m.pid" ]; then kill -INT "$(cat "$state/$m.pid")" 2>/dev/null || true; fi
    for _ in 1 2 3 4 5 6 7 8 9 10; do mountpoint -q "$state/$m.fuse" 2>/dev/null || break; sleep 0.2; done
    mountpoint -q "$state/$m.fuse" 2>/dev/null && umount -l "$state/$m.fuse" 2>/dev/null || true
    rm -f "$base/$m.img"
  done
  if mountpoint -q "$base/zram"; then umount "$base/zram" || true; fi
  if [ -f "$state/zram" ]; then echo 1 > /sys/block/zram0/reset 2>/dev/null || true; fi
  if [ -d "$cg" ]; then
    while read -r p; do echo "$p" > /sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null || true; done < "$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null || true
  fi
  rm -rf "$state" "$base"
}

# newfs DEV DIR: the same fresh ext4 on every drive, mounted at DIR. No
# lazy initialisation: it would write in the background while measured.
# One directory hash seed for all: mkfs draws a random one, and it decides
# the order a directory lists its names in (what grep -r and cp -r read
# in) and the group a new top-level directory goes to — a different seek
# path on the HDD model for the same files on every fresh file system
# (grep -r there: 40-43 s on one set of file systems, 49-57 s on the next).
# It fixes the order, not where the blocks land: docs/predict.md.
# EXTENDED adds mkfs's extended options.
newfs() {
  mkfs.ext4 -q -F -E "lazy_itable_init=0,lazy_journal_init=0,hash_seed=6f3c1a52-9d1e-4b7a-8c2f-5e0d4b9a7c31${3:+,$3}" "$1"
  mkdir -p "$2"
  mount "$1" "$2"
}

# loopfs NAME FILE [FLAG…]: a loop device with direct I/O over FILE (so
# that no page cache stands between it and what serves the file), with
# losetup's FLAGs; prints it.
loopfs() {
  local name=$1 file=$2 loop
  loop=$(losetup --direct-io=on "${@:3}" -f --show "$file")
  echo "$loop" > "$state/$name.loop"
  [ "$(cat "/sys/block/$(basename "$loop")/loop/dio")" = 1 ] || { echo "validation-drives: $loop has no direct I/O: the page cache would stand in for the drive" >&2; return 1; }
  echo "$loop"
}

# device_depth QUEUE N: the device's own depth (its driver tags) — what
# nr_requests sets while the queue has no scheduler. The kernel skips a
# value equal to the last one set, though the tags may have been cut since
# (a loop device of the same number), so it writes N−1 first; it leaves
# the queue without a scheduler.
device_depth() {
  echo none > "$1/scheduler"
  echo $(($2 - 1)) > "$1/nr_requests"
  echo "$2" > "$1/nr_requests"
}

# vmdisk NAME: NAME's partition of the VM disk's loop device (a loop
# device over a file on the disk, with its readahead, scheduler and
# rotational flag; vda the first half, slow the second), with ext4 at
# $base/NAME; prints the whole device (where a throttle goes).
# The file is written through once and never discarded (mkfs nodiscard):
# the root file system is mounted with discard, and a new file system's
# discard punched the file, the VM disk's host giving its blocks up and
# taking new ones as they were written again — the VM disk read the same
# files 86, 117 and 160 µs a request in three rounds (grep -r), 76, 158
# and 383 (cp -r).
vmdisk() {
  local name=$1 size=$((2 * ${DRIVESIM_SIZE:-$((4 << 30))})) src root_dev loop q part
  if [ ! -f "$state/disk.loop" ]; then
    src=$(findmnt -T /var/tmp -no SOURCE)
    root_dev=$(lsblk -no PKNAME "$src" 2>/dev/null || true)
    [ -n "$root_dev" ] || root_dev=$(basename "$src")
    dd if=/dev/zero of="$base/disk.img" bs=4M count=$((size >> 22)) oflag=direct conv=fsync status=none
    # Two primary partitions of half the file each, 1 MiB aligned (MBR).
    python3 - "$base/disk.img" "$size" <<'PY'
import struct, sys
path, size = sys.argv[1], int(sys.argv[2])
sectors, first = size // 512, 2048
half = (sectors - first) // 2 // 2048 * 2048
entries = b""
for start in (first, first + half):
    entries += struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff", start, half)
with open(path, "r+b") as f:
    f.seek(446)
    f.write(entries + bytes(32) + b"\x55\xaa")
PY
    loop=$(loopfs disk "$base/disk.img" -P)
    # A kernel without the MBR parser leaves the table to partx.
    for _ in $(seq 20); do [ -b "${loop}p2" ] && break; sleep 0.1; done
    [ -b "${loop}p2" ] || partx -a "$loop"
    [ -b "${loop}p2" ] || { echo "validation-drives: $loop has no partitions" >&2; return 1; }
    q=/sys/block/$(basename "$loop")/queue
    cat "/sys/block/$root_dev/queue/read_ahead_kb" > "$q/read_ahead_kb"
    cat "/sys/block/$root_dev/queue/rotational" > "$q/rotational"
    # A loop device keeps the depth an earlier one of its number was cut
    # to (a model drive's, below): the whole of it again, then the disk's
    # scheduler.
    device_depth "$q" "$(cat /sys/module/loop/parameters/hw_queue_depth)"
    sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$root_dev/queue/scheduler" > "$q/scheduler"
    # Writeback throttling's target is set when the queue is made (2 ms, a
    # solid-state device's), not when it turns rotational (75 ms).
    if [ -w "$q/wbt_lat_usec" ]; then cat "/sys/block/$root_dev/queue/wbt_lat_usec" > "$q/wbt_lat_usec"; fi
  fi
  loop=$(cat "$state/disk.loop")
  part=${loop}p1
  [ "$name" = slow ] && part=${loop}p2
  newfs "$part" "$base/$name" nodiscard >&2
  echo "$loop"
}

# model NAME READAHEAD_KB ROTATIONAL FLAGS…: a drivesim-served file (its
# data in drivesim's memory, up to the drive's size), a loop device with
# direct I/O over it, that readahead (stated: the kernel's default for a
# loop device depends on what it sat on before) and rotational flag —
# with the writeback throttling target the kernel gives such a disk
# (75 ms; 2 ms a solid-state one's) — ext4 on that, mounted at $base/NAME.
model() {
  local name=$1 readahead=$2 rotational=$3 size=${DRIVESIM_SIZE:-$((4 << 30))}
  shift 3
  mkdir -p "$state/$name.fuse" "$base/$name"
  "$state/drivesim" --model "$name" --size "$size" --mount "$state/$name.fuse" "$@" > "$state/$name.log" 2>&1 &
  echo $! > "$state/$name.pid"
  for _ in $(seq 50); do [ -e "$state/$name.fuse/disk.img" ] && break; sleep 0.1; done
  [ -e "$state/$name.fuse/disk.img" ] || { echo "validation-drives: drivesim did not serve $name: $(cat "$state/$name.log")" >&2; return 1; }
  local loop
  loop=$(loopfs "$name" "$state/$name.fuse/disk.img")
  local q
  q=/sys/block/$(basename "$loop")/queue
  echo "$readahead" > "$q/read_ahead_kb"
  echo "$rotational" > "$q/rotational"
  if [ "$rotational" = 1 ] && [ -w "$q/wbt_lat_usec" ]; then echo 75000 > "$q/wbt_lat_usec"; fi
  # A drive that takes one command at a time leaves its queue to the host:
  # the kernel gives a one-queue disk mq-deadline, where waiting requests
  # are sorted and merged until the drive takes the next. A loop device
  # takes 128 at once into its own queue, where nothing merges: tar -x's
  # writeback reached the HDD model in 1,650 requests of 48 KiB, against
  # 475 of 268 KiB with the host holding the queue (the VM disk: 400-590
  # of 190-320 KiB). So the device's own depth is cut to the least the
  # kernel takes (4: nr_requests is the driver's depth while there is no
  # scheduler), and then it gets mq-deadline.
  device_depth "$q" 4
  echo mq-deadline > "$q/scheduler"
  newfs "$loop" "$base/$name"
}

# fresh: a new file system on every drive that is up, as up made it.
# Files written over an emptied one land elsewhere than on a new one: ext4
# starts a large file where its last large allocation ended (kept while
# mounted), and the per-CPU groups small files go in keep their
# preallocations — the same files, emptied and written again, lay in
# other places each round (docs/predict.md).
fresh() {
  local m part
  for m in vda slow; do
    if mountpoint -q "$base/$m"; then
      part=$(findmnt -no SOURCE "$base/$m")
      umount "$base/$m"
      newfs "$part" "$base/$m" nodiscard
    fi
  done
  if mountpoint -q "$base/zram"; then
    umount "$base/zram"
    newfs /dev/zram0 "$base/zram"
  fi
  for m in hdd usb; do
    if mountpoint -q "$base/$m"; then
      umount "$base/$m"
      newfs "$(cat "$state/$m.loop")" "$base/$m"
    fi
  done
}

up() {
  local want=("$@")
  [ ${#want[@]} -eq 0 ] && want=("${all[@]}")
  trap 'down; exit 1' ERR
  mkdir -p "$state" "$base"
  for d in "${want[@]}"; do
    case $d in
      vda)
        vmdisk vda > /dev/null
        echo "vda $base/vda"
        ;;
      zram)
        modprobe zram 2>/dev/null || true
        [ -e /sys/block/zram0 ] || { echo "validation-drives: no zram0 (modprobe zram)" >&2; false; }
        [ "$(cat /sys/block/zram0/disksize)" = 0 ] || { echo "validation-drives: zram0 is in use: free it or 'echo 1 > /sys/block/zram0/reset'" >&2; false; }
        echo 4G > /sys/block/zram0/disksize && touch "$state/zram"
        newfs /dev/zram0 "$base/zram"
        echo "zram $base/zram"
        ;;
      slow)
        [ -d /sys/fs/cgroup/blkio ] || { echo "validation-drives: no cgroup v1 blkio controller" >&2; false; }
        mkdir -p "$cg"
        local loop majmin f
        loop=$(vmdisk slow)
        majmin=$(cat "/sys/block/$(basename "$loop")/dev")
        for f in read_bps_device write_bps_device; do echo "$majmin 40000000" > "$cg/blkio.throttle.$f"; done
        for f in read_iops_device write_iops_device; do echo "$majmin 1500" > "$cg/blkio.throttle.$f"; done
        echo "slow $base/slow $cg"
        ;;
      hdd | usb)
        [ -e /dev/fuse ] || { echo "validation-drives: no /dev/fuse" >&2; false; }
        [ -x "$state/drivesim" ] || go build -o "$state/drivesim" ./tools/drivesim
        # A USB disk's readahead is what its bridge reports as the optimal
        # transfer; a stick's the kernel's default.
        # A disk says it spins (the bridge passes its rotation rate on);
        # flash does not.
        local flags=${DRIVESIM_HDD:-} readahead=2560 rotational=1
        [ "$d" = usb ] && flags=${DRIVESIM_USB:-} readahead=128 rotational=0
        # shellcheck disable=SC2086
        model "$d" "$readahead" "$rotational" $flags
        echo "$d $base/$d"
        ;;
      *)
        echo "validation-drives: no drive '$d' (${all[*]})" >&2
        false
        ;;
    esac
  done
  trap - ERR
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  fresh) fresh ;;
  list)
    for d in "${all[@]}"; do
      case $d in
        slow) [ -d "$cg" ] && mountpoint -q "$base/slow" && echo "slow $base/slow $cg" ;;
        vda) mountpoint -q "$base/vda" && echo "vda $base/vda" ;;
        *) mountpoint -q "$base/$d" && echo "$d $base/$d" ;;
      esac || true # a drive that is not up is not a failure
    done
    ;;
  *)
    echo "usage: validation-drives.sh up [DRIVE…] | list | fresh | down" >&2
    exit 2
    ;;
esac
