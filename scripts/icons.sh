#!/usr/bin/env bash
# Draws Engram's app icon with ImageMagick: a rounded indigo-to-violet tile holding an "E" whose
# arms are index lines, the middle one ending in a recall dot. From the one 1024 px drawing it
# writes the PNGs (Linux), icon.ico (Windows) and icon.icns (macOS), all committed: run this only
# to change the design. Needs ImageMagick 6 (`/usr/bin/convert`, Debian `imagemagick`) and Tauri's
# CLI (`scripts/setup.sh --package`), whose `tauri icon` writes the .ico and the .icns: ImageMagick
# 6 cannot write .icns.
set -euo pipefail
cd "$(dirname "$0")/.."
tauri=$PWD/target/tools/tauri-cli/node_modules/.bin/tauri
[ -x "$tauri" ] || { echo "icons.sh: Tauri's CLI is missing: run \`scripts/setup.sh --package\`" >&2; exit 1; }
cd icons
convert=/usr/bin/convert
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1024 px master: gradient tile, clipped to a rounded square with a soft drop shadow.
"$convert" -size 1024x1024 -define gradient:angle=135 gradient:'#8b7cf8-#4338ca' "$work/grad.png"
"$convert" -size 1024x1024 xc:none -fill white -draw 'roundrectangle 72,72 952,952 210,210' "$work/mask.png"
"$convert" "$work/grad.png" "$work/mask.png" -alpha off -compose CopyOpacity -composite "$work/tile.png"
# A faint light from the top edge gives the tile some depth.
"$convert" -size 1024x1024 gradient:'rgba(255,255,255,0.16)-rgba(255,255,255,0)' "$work/hl.png"
"$convert" "$work/tile.png" "$work/hl.png" -compose SrcAtop -composite "$work/tile.png"
"$convert" "$work/tile.png" \( +clone -background 'rgba(30,20,90,0.45)' -shadow 60x18+0+14 \) +swap \
  -background none -layers merge +repage -gravity center -extent 1024x1024 "$work/tile.png"

# The glyph: spine + three arms (index lines); the middle arm is short and ends in a dot.
"$convert" -size 1024x1024 xc:none -fill white \
  -draw 'roundrectangle 300,270 408,754 54,54' \
  -draw 'roundrectangle 300,270 740,378 54,54' \
  -draw 'roundrectangle 300,458 600,566 54,54' \
  -draw 'circle 686,512 736,512' \
  -draw 'roundrectangle 300,646 740,754 54,54' \
  "$work/glyph.png"
"$convert" "$work/tile.png" "$work/glyph.png" -compose Over -composite "$work/master.png"

# macOS' menu bar draws its icons as templates — black and transparency, tinted to suit a light
# or dark bar — so the tray there shows the glyph alone, at 22 pt @2x.
"$convert" "$work/glyph.png" -channel RGB -negate +channel -trim +repage -gravity center \
  -background none -extent 560x560 -filter Lanczos -resize 44x44 -strip -depth 8 "PNG32:tray-template.png"

for size in 32 128 256 512; do
  "$convert" "$work/master.png" -filter Lanczos -resize ${size}x${size} -strip -depth 8 "PNG32:$work/$size.png"
done
cp "$work/32.png" 32x32.png
cp "$work/128.png" 128x128.png
cp "$work/256.png" 128x128@2x.png
cp "$work/512.png" icon.png

# Windows' .ico (16 to 256 px) and macOS' .icns (16 to 1024 px), from the same 1024 px master;
# `tauri icon` also writes store and mobile sizes, which are not kept.
"$tauri" icon "$work/master.png" --output "$work/tauri" >"$work/tauri.log" 2>&1 ||
  { cat "$work/tauri.log" >&2; exit 1; }
cp "$work/tauri/icon.ico" icon.ico
cp "$work/tauri/icon.icns" icon.icns
