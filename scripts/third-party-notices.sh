#!/usr/bin/env bash
# Writes THIRD_PARTY_NOTICES: the licence of every module linked into the
# ioshape binary (as go list finds them for linux and darwin), and
# ECharts', which the binary embeds. Run after changing dependencies; the
# packaging tests check it names every linked module.
set -euo pipefail
cd "$(dirname "$0")/.."
out=THIRD_PARTY_NOTICES
modules=$( (GOOS=linux go list -deps -f '{{if not .Standard}}{{with .Module}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/ioshape
            GOOS=darwin go list -deps -f '{{if not .Standard}}{{with .Module}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/ioshape) |
          grep -v '^github.com/ioshape/ioshape ' | sort -u)
{
  echo "ioshape includes the following third-party software. Each is under its own licence, reproduced here."
  echo
  echo "================================================================================"
  echo "Apache ECharts 5.4.3 (embedded in the HTML reports)"
  echo "================================================================================"
  cat web/echarts-NOTICE
  echo
  cat web/echarts-LICENSE
  while read -r path version dir; do
    [ -n "$path" ] || continue
    lic=$(ls "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* 2>/dev/null | head -1 || true)
    echo
    echo "================================================================================"
    echo "$path $version"
    echo "================================================================================"
    if [ -n "$lic" ]; then cat "$lic"; else echo "(no licence file in the module)"; fi
    [ -f "$dir/NOTICE" ] && { echo; cat "$dir/NOTICE"; }
  done <<< "$modules"
} > "$out"
echo "$out: $(grep -c '^====' "$out") sections"
