#!/bin/sh
# Run a command as on an AVX2-only CPU: AVX-512, VNNI and AMX hidden from its CPUID (cpuid_mask.c;
# the CPU's flags must list cpuid_fault: the GPU machine's Xeon does, this development VM does not).
#
#   benchmarks/cpuid_mask/run_avx2.sh taskset -c 0,1 python3 benchmarks/bench_inference.py --questions 40 --threads 2
#
# The library is built next to this script (or CPUID_MASK_LIB names a built one: a machine without
# a C compiler).  The product's recipe is the one `inference.cpu_recipes.choose` gives a CPU without
# VNNI (fp32): the choice reads /proc/cpuinfo, which the mask cannot change.
set -e
here=$(cd "$(dirname "$0")" && pwd)
lib=${CPUID_MASK_LIB:-$here/build/libcpuid_mask.so}
if [ ! -f "$lib" ]; then
    mkdir -p "$(dirname "$lib")"
    cc -O2 -shared -fPIC -o "$lib" "$here/cpuid_mask.c" -ldl
fi
export MCQLENS_CPUID_MASK="AVX-512, VNNI and AMX hidden from CPUID by CPUID faulting (benchmarks/cpuid_mask)"
export MCQLENS_CPU_RECIPE="${MCQLENS_CPU_RECIPE:-fp32}"
LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
