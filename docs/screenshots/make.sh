#!/bin/sh
# The window's screenshots in docs/screenshots/, under Xvfb (apt-get install -y xvfb xdotool), on a real EMBRACE item:
#   docs/screenshots/make.sh [DB] [ITEM]
# DB defaults to a fresh database of ../shared/data's EMBRACE green + ExpMRC RACE+ dev; ITEM to 0_0.
# Each size runs on a virtual screen of that size; MCQLENS_PALETTE picks the light or the dark palette.
set -e
cd "$(dirname "$0")/../.."
DB=${1:-}
ITEM=${2:-0_0}
if [ -z "$DB" ]; then
  DB=$(mktemp -d)/screens.db
  python -m desktop.cli import ../shared/data/embrace/embrace_green.jsonl ../shared/data/expmrc/expmrc-race-dev.json --db "$DB"
fi
SETTINGS=$(mktemp -d)/settings.ini
n=91
for size in 1366x768 1920x1080; do
  n=$((n + 1))
  # -noreset: without it the server resets when its one client leaves, and the next
  # screenshot's connection can fall into the reset ("could not connect to display")
  Xvfb :$n -screen 0 ${size}x24 -noreset >/dev/null 2>&1 &
  xvfb=$!
  # the server answers within a second on a quiet machine, later on a busy one
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    DISPLAY=:$n xdotool getdisplaygeometry >/dev/null 2>&1 && break
    sleep 1
  done
  for palette in light dark; do
    DISPLAY=:$n MCQLENS_PALETTE=$palette MCQLENS_SETTINGS=$SETTINGS python -m desktop.cli gui --db "$DB" \
      --item "$ITEM" --annotator screenshots --size "$size" --screenshot "docs/screenshots/window-$size-$palette.png"
  done
  if [ "$size" = 1366x768 ]; then  # the Help window: the guide, searched for "negative MI"
    for palette in light dark; do
      DISPLAY=:$n MCQLENS_PALETTE=$palette MCQLENS_SETTINGS=$SETTINGS python - "$DB" "$ITEM" \
        "docs/screenshots/help-guide-$palette.png" <<'PY'
import sys
from desktop.ui.app import application
from desktop.ui.backend import Backend
from desktop.ui.main_window import MainWindow
app = application()
window = MainWindow(Backend.open(sys.argv[1], annotator="screenshots"), facts=False)
window.go_to(sys.argv[2])
window.show()
dialog = window.help.open_guide("model")
dialog.resize(1000, 680)
dialog.find("negative MI")
for _ in range(5):
    app.processEvents()
dialog.grab().save(sys.argv[3])
print("wrote", sys.argv[3])
window.close()
PY
    done
  fi
  kill $xvfb
done
# 256 colours without dithering: text stays crisp and each file stays well under 300 KB
python - docs/screenshots/window-*.png docs/screenshots/help-*.png <<'PY'
import sys
from PIL import Image
for path in sys.argv[1:]:
    im = Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    im.save(path, optimize=True)
PY
ls -l docs/screenshots/*.png
