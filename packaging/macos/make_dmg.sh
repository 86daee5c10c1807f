#!/usr/bin/env bash
# Make a compressed .dmg holding the .app and a link to /Applications (drag to install).
#   packaging/macos/make_dmg.sh dist/subtitler.app dist/subtitler-0.1.0-macos-arm64.dmg
set -euo pipefail
app="$1"
out="$2"
[ -d "$app" ] || { echo "no app bundle at $app" >&2; exit 2; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
# ditto keeps the bundle's symlinks, permissions and extended attributes (and signatures).
ditto "$app" "$stage/$(basename "$app")"
ln -s /Applications "$stage/Applications"
rm -f "$out"
hdiutil create -volname "subtitler" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$out"
echo "$out"
