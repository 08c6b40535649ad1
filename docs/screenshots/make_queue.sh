#!/bin/sh
# The model's two stages and its state in the status bar (issue 29), at 1366x768, light and dark,
# under Xvfb (apt-get install -y xvfb xdotool):
#   docs/screenshots/make_queue.sh [ITEM] [MODEL]
# Each palette gets a fresh database of ../shared/data's EMBRACE green (so ITEM, default 0_0, is
# unscored); MODEL defaults to the shipped models/default.  Three pictures per palette:
#   queue-stage1-*: the probabilities, N and MI on screen, the evidence still to come ("evidence…")
#   queue-stage2-*: the evidence outlined in the passage; the navigator's ▪ on the items scored
#   queue-status-*: the status bar's right end, "model: N items ahead" (scaled 2x to be read)
set -e
cd "$(dirname "$0")/../.."
ITEM=${1:-0_0}
MODEL=${2:-models/default}
Xvfb :96 -screen 0 1366x768x24 -noreset >/dev/null 2>&1 &
xvfb=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
  DISPLAY=:96 xdotool getdisplaygeometry >/dev/null 2>&1 && break
  sleep 1
done
for palette in light dark; do
  DB=$(mktemp -d)/queue.db
  python -m desktop.cli import ../shared/data/embrace/embrace_green.jsonl --db "$DB" >/dev/null
  DISPLAY=:96 MCQLENS_PALETTE=$palette MCQLENS_SETTINGS=$(mktemp -d)/settings.ini MCQLENS_MODEL=$MODEL \
    MCQLENS_SCORE_AHEAD=3 python - "$DB" "$ITEM" "$palette" <<'PY'
import sys
import threading
import time

from desktop.ui.model import stages as model_stages
from desktop.ui.app import application
from desktop.ui.backend import Backend
from desktop.ui.main_window import MainWindow

db, item, palette = sys.argv[1:4]
gate = threading.Event()  # the evidence of the open item waits until stage 1 is photographed
real = model_stages.score_evidence


def held(model, scores, question, passage_text):
    if question.id == item:
        gate.wait(600)
    return real(model, scores, question, passage_text)


model_stages.score_evidence = held
app = application()
window = MainWindow(Backend.open(db, annotator="screenshots"), facts=False)
window.resize(1366, 768)
window.showMaximized()
window.go_to(item)
review = window.model_review


def wait(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not cond():
        app.processEvents()
        time.sleep(0.02)
    for _ in range(10):
        app.processEvents()
        time.sleep(0.02)


wait(lambda: review.view is not None and len(review.view.formats) == 2, 600)
window.grab().save(f"docs/screenshots/queue-stage1-1366x768-{palette}.png")
print("wrote stage 1:", review.panel.status.text(), "|", review.queue_control.model_state.text())
gate.set()
wait(lambda: review.view.evidence is not None and review.worker.snapshot()["ready"] >= 2, 900)
window.grab().save(f"docs/screenshots/queue-stage2-1366x768-{palette}.png")
bar = window.statusBar()
shot = bar.grab()
right = shot.copy(max(0, shot.width() - 700), 0, min(700, shot.width()), shot.height())
right.scaled(right.width() * 2, right.height() * 2).save(f"docs/screenshots/queue-status-{palette}.png")
print("wrote stage 2:", review.queue_control.model_state.text())
window.close()
review.stop(120)
PY
done
kill $xvfb 2>/dev/null || true
# 256 colours without dithering: text stays crisp and each file stays small
python - docs/screenshots/queue-*.png <<'PY'
import sys
from PIL import Image
for path in sys.argv[1:]:
    im = Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    im.save(path, optimize=True)
PY
ls -l docs/screenshots/queue-*.png
