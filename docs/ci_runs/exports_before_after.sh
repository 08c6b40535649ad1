#!/bin/bash
# $1: code dir; $2: out dir
set -e
code=$1; out=$2; rm -rf $out; mkdir -p $out; cd $out
export PYTHONPATH=$code MCQLENS_ANNOTATOR=anna
run() { /work/main/.venv/bin/python -c "import sys; sys.argv[0]='mcqlens'; from desktop.cli import main; sys.exit(main())" "$@"; }
run import /work/shared/data/embrace/embrace_green.jsonl /work/shared/data/embrace/embrace_yellow.jsonl /work/shared/data/expmrc/expmrc-race-dev.json --db a.db > /dev/null 2>&1
run annotate --help >/dev/null 2>&1 || true
for f in embrace expmrc race csv; do run export $f --db a.db -o $out/x.$f > /dev/null 2>&1 || echo "export $f failed"; done
run export embrace --db a.db --file embrace_green.jsonl -o $out/green.embrace >/dev/null 2>&1 || echo "file export failed"
ls $out
