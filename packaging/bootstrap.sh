#!/usr/bin/env bash
# The two entry points of README.md, both idempotent:
#   packaging/bootstrap.sh run    install what is missing, build, open the GUI on the
#                                 built-in example project (or, without a display, print
#                                 the example's plan summary from the command line)
#   packaging/bootstrap.sh test   install what is missing, build, run every test with ctest
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
build=${HAPMOE_BUILD_DIR:-$src/build}
mode=${1:-}

case "$mode" in
  run|test) ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

"$here/install-deps.sh"

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j2

if [ "$mode" = test ]; then
  cd "$build"
  exec env QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j2 --timeout 900
fi

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/studio/hapmoe-studio"
fi
echo "No display available (DISPLAY and WAYLAND_DISPLAY are unset), so the GUI cannot open."
echo "Printing the built-in example's plan summary from the command line instead:"
echo "  hapmoe plan --model Mixtral-S --cluster 32-3"
echo
exec "$build/app/cli/hapmoe" plan --model Mixtral-S --cluster 32-3
