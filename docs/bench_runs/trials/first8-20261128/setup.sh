# sourced at the start of each benchmark call on the lent machine (idempotent): the wheels the
# image lacks, the model in /tmp/m behind models/default, RACE dev where bench_inference reads it
[ -d /tmp/site/nltk ] || pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
rm -rf models/default && ln -s /tmp/m models/default
D=$(cd .. && pwd)/shared/data/race
mkdir -p "$D" && { [ -d "$D/dev" ] || cp -r /tmp/m/race/dev "$D/"; }
ls "$D/dev" | head -2
