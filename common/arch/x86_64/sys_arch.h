/* sys_arch.h (x86_64) - one system call by the `syscall` instruction
 * (common/sys.h). The kernel clobbers rcx and r11. async-signal-safe. */
#ifndef SONDE_SYS_ARCH_H
#define SONDE_SYS_ARCH_H

static inline long sd_sys6_(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
