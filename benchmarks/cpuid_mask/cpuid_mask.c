/* An AVX2-only CPU for measurement: the CPU's AVX-512, VNNI and AMX feature bits hidden from every
 * program in this process, by CPUID faulting (Linux ARCH_SET_CPUID; the CPU's flags must include
 * cpuid_fault).
 *
 *     LD_PRELOAD=libcpuid_mask.so python3 benchmarks/bench_inference.py ...   (see run_avx2.sh)
 *
 * At load it makes every CPUID instruction of the process fault (the setting is per thread and
 * inherited by the threads created after it); the SIGSEGV handler runs the real CPUID, clears the
 * bits below and returns past the instruction.  ONNX Runtime's MLAS, numpy and oneDNN read the
 * features with CPUID when they load, so they pick the kernels they pick on an AVX2 CPU with FMA.
 * The dynamic loader read the features before this library ran: glibc's own string functions may
 * still use AVX-512 (they are not what is measured).  /proc/cpuinfo is not changed: the product's
 * recipe choice reads it, so run_avx2.sh sets the choice an AVX2 CPU gets (MCQLENS_CPU_RECIPE=fp32).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction app_action;   /* a SIGSEGV handler the program itself installs */
static int app_has_action;
static volatile unsigned long traps;

static void cpuid_raw(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static void hide(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    if (leaf == 7 && sub == 0) {
        /* EBX: AVX512F, DQ, IFMA, PF, ER, CD, BW, VL */
        r[1] &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
        /* ECX: AVX512_VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ */
        r[2] &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
        /* EDX: 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512_FP16, AMX-TILE, AMX-INT8 */
        r[3] &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
    } else if (leaf == 7 && sub == 1) {
        /* EAX: AVX-VNNI, AVX512_BF16, AMX-FP16, AVX-IFMA; EDX: AVX-VNNI-INT8, AVX-NE-CONVERT,
         * AMX-COMPLEX, AVX-VNNI-INT16, AVX10 */
        r[0] &= ~((1u << 4) | (1u << 5) | (1u << 21) | (1u << 23));
        r[3] &= ~((1u << 4) | (1u << 5) | (1u << 8) | (1u << 10) | (1u << 19));
    } else if (leaf == 0xD && sub == 0) {
        /* the opmask, ZMM and AMX tile states among the XSAVE features */
        r[0] &= ~((1u << 5) | (1u << 6) | (1u << 7) | (1u << 17) | (1u << 18));
    } else if (leaf == 0x1D || leaf == 0x1E || leaf == 0x24) {
        r[0] = r[1] = r[2] = r[3] = 0; /* AMX tile and TMUL information, AVX10 */
    }
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    /* a faulting CPUID is a general protection fault: SI_KERNEL, the instruction 0F A2 at RIP */
    if (si->si_code == SI_KERNEL) {
        const unsigned char *ip = (const unsigned char *)g[REG_RIP];
        if (ip[0] == 0x0F && ip[1] == 0xA2) {
            uint32_t leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX], r[4];
            syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
            cpuid_raw(leaf, sub, r);
            syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
            hide(leaf, sub, r);
            g[REG_RAX] = r[0]; g[REG_RBX] = r[1]; g[REG_RCX] = r[2]; g[REG_RDX] = r[3];
            g[REG_RIP] += 2;
            traps++;
            return;
        }
    }
    /* any other fault: the program's own handler, or the default action (the process ends) */
    if (app_has_action && (app_action.sa_flags & SA_SIGINFO) && app_action.sa_sigaction) {
        app_action.sa_sigaction(sig, si, ctx);
        return;
    }
    if (app_has_action && app_action.sa_handler != SIG_DFL && app_action.sa_handler != SIG_IGN) {
        app_action.sa_handler(sig);
        return;
    }
    signal(SIGSEGV, SIG_DFL);
}

/* keep our handler first when the program installs its own (Python's faulthandler, say) */
int sigaction(int signum, const struct sigaction *act, struct sigaction *old) {
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real)
        real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    if (signum != SIGSEGV)
        return real(signum, act, old);
    if (old)
        *old = app_action;
    if (act) {
        app_action = *act;
        app_has_action = 1;
    }
    return 0;
}

unsigned long cpuid_mask_traps(void) { return traps; }

__attribute__((constructor)) static void start(void) {
    int (*real)(int, const struct sigaction *, struct sigaction *) =
        (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    real(SIGSEGV, &sa, NULL);
    if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        perror("cpuid_mask: ARCH_SET_CPUID (this CPU or kernel has no CPUID faulting)");
        _exit(3);
    }
}
