#!/usr/bin/env bash
# A first cross-check of `ioshape predict` (not the validation harness of
# issue 10): benches two drives — the VM disk under /var/tmp and a zram
# ext4 — records three fixed-size workloads cold on each, predicts each
# recording on both drives and prints predicted against measured.
# Run as root on Linux with fio: sudo bash scripts/predict-crosscheck.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root: it benches drives and records" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is needed: apt-get install fio" >&2; exit 1; }
go build -o bin/ioshape ./cmd/ioshape
store=$(mktemp -d) vda=$(mktemp -d /var/tmp/ioshape-xcheck.XXXXXX) zram=/mnt/ioshape-zram
cleanup() { umount "$zram" 2>/dev/null || true; echo 1 > /sys/block/zram0/reset 2>/dev/null || true; rm -rf "$store" "$vda"; }
trap cleanup EXIT
modprobe zram 2>/dev/null || true
[ -e /sys/block/zram0 ] || { echo "no zram0 device" >&2; exit 1; }
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || { echo "zram0 is busy (in use): reset it first" >&2; exit 1; }
echo 4G > /sys/block/zram0/disksize # room for the 1 GiB test file, a 512 MiB file and its copy
mkfs.ext4 -q /dev/zram0
mkdir -p "$zram" && mount /dev/zram0 "$zram"
declare -A dirs=([vda]=$vda [zram]=$zram)
for d in vda zram; do
  bin/ioshape --store "$store" bench --dir "${dirs[$d]}" --size 512M --runtime 40s --label "$d" 2>/dev/null
done
declare -A measured
for d in vda zram; do
  dir=${dirs[$d]}
  fio --name=prep --filename="$dir/data" --size=1G --rw=write --bs=1M --direct=1 --output=/dev/null
  head -c 536870912 /dev/urandom > "$dir/big"; sync
  for w in rnd4k seq1m cp; do
    case $w in
      rnd4k) cmd=(fio --name=w --filename="$dir/data" --size=1G --rw=randread --bs=4k --io_size=24M --thinktime=100 --direct=1 --output=/dev/null) ;;
      seq1m) cmd=(fio --name=w --filename="$dir/data" --size=1G --rw=read --bs=1M --io_size=1G --direct=1 --output=/dev/null) ;;
      cp)    cmd=(cp "$dir/big" "$dir/big.copy") ;;
    esac
    rm -f "$dir/big.copy"
    measured[$w-$d]=$(bin/ioshape --store "$store" record --cold --label "$w-$d" --json -- "${cmd[@]}" 2>/dev/null | sed -n 's/.*"duration_s": \([0-9.]*\).*/\1/p')
  done
done
printf '%-6s %-12s %10s %10s %8s %10s\n' workload from→to predicted measured error headline
for w in rnd4k seq1m cp; do
  for from in vda zram; do
    for to in vda zram; do
      bin/ioshape --store "$store" predict --json --drive "$to" "$w-$from" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); m=float(sys.argv[4]); print("%-6s %-12s %9.3fs %9.3fs %+7.0f%% %9.3fs" % (sys.argv[1], sys.argv[2]+"→"+sys.argv[3], r["predicted_s"], m, (r["predicted_s"]/m-1)*100, r["headline_s"]))' "$w" "$from" "$to" "${measured[$w-$to]}"
    done
  done
done
