#!/bin/sh
# The model panel's Why? tab at 1366x768, light and dark, under Xvfb (apt-get install -y xvfb):
#   docs/screenshots/make_why.sh [DB] [ITEM] [MODEL]
# DB defaults to a fresh database of ../shared/data's EMBRACE green; ITEM to 821_1 (its
# distractors say "all" and "more important than"); MODEL to the shipped models/default.
set -e
cd "$(dirname "$0")/../.."
DB=${1:-}
ITEM=${2:-821_1}
MODEL=${3:-models/default}
if [ -z "$DB" ]; then
  DB=$(mktemp -d)/why.db
  python -m desktop.cli import ../shared/data/embrace/embrace_green.jsonl --db "$DB"
fi
SETTINGS=$(mktemp -d)/settings.ini
Xvfb :97 -screen 0 1366x768x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
for palette in light dark; do
  DISPLAY=:97 MCQLENS_PALETTE=$palette MCQLENS_SETTINGS=$SETTINGS MCQLENS_MODEL=$MODEL python - "$DB" "$ITEM" \
    "docs/screenshots/why-1366x768-$palette.png" <<'PY'
import sys
import time

from desktop.ui.app import application
from desktop.ui.backend import Backend
from desktop.ui.main_window import MainWindow

app = application()
# read-only, as `mcqlens gui --screenshot`: the explanation is computed, shown, not stored
window = MainWindow(Backend.open(sys.argv[1], annotator="screenshots", read_only=True), facts=False)
window.resize(1366, 768)
window.showMaximized()
window.go_to(sys.argv[2])
review = window.model_review
review.settle(120)
review.why.open()
end = time.monotonic() + 120
while time.monotonic() < end and review.why.view.explanation is None:
    app.processEvents()
    time.sleep(0.02)
for _ in range(10):
    app.processEvents()
    time.sleep(0.02)
window.grab().save(sys.argv[3])
print("wrote", sys.argv[3], window.size().width(), "x", window.size().height())
window.close()
PY
done
kill $xvfb
# 256 colours without dithering: text stays crisp and each file stays small
python - docs/screenshots/why-*.png <<'PY'
import sys
from PIL import Image
for path in sys.argv[1:]:
    im = Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    im.save(path, optimize=True)
PY
ls -l docs/screenshots/why-*.png
