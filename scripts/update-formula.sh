#!/usr/bin/env bash
# Writes a release's version and archive checksums into the Homebrew formula.
#   scripts/update-formula.sh 0.3.0 dist/checksums.txt [packaging/homebrew/ioshape.rb]
set -euo pipefail
version=$1 sums=$2 formula=${3:-packaging/homebrew/ioshape.rb}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "update-formula: version must look like 1.2.3, not '$version'" >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cp "$formula" "$tmp"
sed -i.bak -E "s/^  version \"[^\"]*\"/  version \"$version\"/" "$tmp"
for target in darwin_arm64 darwin_amd64 linux_arm64 linux_amd64; do
  archive="ioshape_${version}_${target}.tar.gz"
  sum=$(awk -v a="$archive" '$2 == a { print $1 }' "$sums")
  [[ $sum =~ ^[0-9a-f]{64}$ ]] || { echo "update-formula: no checksum for $archive in $sums" >&2; exit 1; }
  # The sha256 line follows the url line of that target.
  awk -v t="_${target}.tar.gz\"" -v s="$sum" '
    index($0, t) { print; getline; sub(/sha256 "[0-9a-f]+"/, "sha256 \"" s "\""); print; next } { print }' "$tmp" > "$tmp.new"
  mv "$tmp.new" "$tmp"
done
rm -f "$tmp.bak"
cp "$tmp" "$formula"
echo "update-formula: $formula is at $version"
