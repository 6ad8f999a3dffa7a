#!/usr/bin/env bash
# Regenerates every screenshot in docs/screenshots/ with the built application.
#   docs/make-screenshots.sh [BUILD_DIR]      (default: build)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$src/build}
out=$src/docs/screenshots
studio=$build/app/studio/hapmoe-studio
export QT_QPA_PLATFORM=offscreen
mkdir -p "$out"

"$studio" --cluster-preset 32-3 --select 2 --screenshot "$out/designer-32-3-light.png"
"$studio" --cluster-preset 32-3 --select 2 --theme dark --screenshot "$out/designer-32-3-dark.png"
"$studio" --tab model --screenshot "$out/model-light.png"
"$studio" --tab model --theme dark --screenshot "$out/model-dark.png"
"$studio" --run-search --screenshot "$out/search-light.png"
"$studio" --run-search --theme dark --screenshot "$out/search-dark.png"
"$studio" --cluster-preset 16-1 --device-types H800 --screenshot "$out/device-types.png"
"$studio" "$src/tests/data/megatron/mixtral_h800_plan.json" --calibrate-log "$src/tests/data/megatron/train_mixtral_h800.log" \
    --size 1600x1000 --screenshot "$out/calibrate.png"
# export: the window with the export dialog open (modeless) for the best plan.
for view in timeline memory breakdown compare whatif export; do
  "$studio" --model-preset Mixtral-S --cluster-preset 24-1 --run-search --view "$view" \
      --size 1900x1150 --screenshot "$out/explorer-studio-$view.png"
done
cmake --build "$build" --target explorer_screenshots -j2
"$build/tests/ui/explorer/explorer_screenshots" "$out" --cluster 24-1
