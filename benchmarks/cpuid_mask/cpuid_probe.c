/* What CPUID says of AVX-512, VNNI and AMX: the check that cpuid_mask.so hides them. */
#include <cpuid.h>
#include <stdio.h>
int main(void) {
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    printf("avx2 %u avx512f %u avx512bw %u avx512vl %u avx512_vnni %u amx_int8 %u amx_tile %u", (b >> 5) & 1,
           (b >> 16) & 1, (b >> 30) & 1, (b >> 31) & 1, (c >> 11) & 1, (d >> 25) & 1, (d >> 24) & 1);
    __cpuid_count(7, 1, a, b, c, d);
    printf(" avx_vnni %u avx512_bf16 %u\n", (a >> 4) & 1, (a >> 5) & 1);
    return 0;
}
