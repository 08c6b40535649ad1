# call 4: the last files, checked; first9 and first8 side by side; VNNI, masked (AVX2), VNNI runs of bench_inference
touch /tmp/mark4
cp -r carry/n4/* /tmp/m/ && (cd /tmp/m && sha256sum -c --quiet SHA256SUMS && echo sums-ok) > $OUT/info.txt 2>&1
. carry/xeon/setup.sh >> $OUT/info.txt 2>&1
{ lscpu; lscpu -e; cat /proc/loadavg; } >> $OUT/info.txt 2>&1
taskset -c 0,1 python3 carry/xeon/recipe_speed.py 30 int8x2-first9 int8x2-first8 > $OUT/recipe_speed.json 2>> $OUT/info.txt
run() { echo "== $1 $(date -u +%T)" >> $OUT/runs.log; shift; "$@" >> $OUT/runs.log 2>&1; find docs/bench_runs -name 'bench_*.json' -newer /tmp/mark4 -exec cp {} $OUT/ \; ; }
B="python3 benchmarks/bench_inference.py --questions 40 --threads 2"
run vnni1 taskset -c 0,1 $B
run masked1 env CPUID_MASK_LIB=$PWD/carry/cpuid/libcpuid_mask.so benchmarks/cpuid_mask/run_avx2.sh taskset -c 0,1 $B
run vnni2 taskset -c 0,1 $B
ls $OUT
