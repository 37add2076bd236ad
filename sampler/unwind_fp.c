/* unwind_fp.c - the frame-pointer walk of an interrupted context, in signal
 * context: SONDE_UNWIND=fp, threads whose libunwind cache did not fit, and
 * threads made without pthread_create (foreign.c).
 *
 * Called from the handlers (handler.c, foreign.c). async-signal-safe: it
 * reads memory known to be readable directly and anything else through the
 * kernel, never faulting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sys.h"
#include "sampler/sampler.h"

/* The two words of a frame at fp (the caller's fp, the return address),
 * read without a fault: directly inside [lo, hi), known to be readable;
 * elsewhere through the kernel (process_vm_readv on this process fails on
 * memory it cannot read: unmapped, PROT_NONE), at most *budget times. */
static int frame_read_sigsafe(uintptr_t fp, uintptr_t lo, uintptr_t hi, int *budget,
			      uintptr_t w[2])
{
	if (fp >= lo && fp + 16 <= hi && fp + 16 > fp) {
		w[0] = ((const uintptr_t *)fp)[0];
		w[1] = ((const uintptr_t *)fp)[1];
		return 0;
	}
	if (*budget <= 0)
		return -1;
	(*budget)--;
	struct iovec local = {.iov_base = w, .iov_len = 16};
	struct iovec remote = {.iov_base = (void *)fp, .iov_len = 16};
	return sd_sys(SYS_process_vm_readv, sd_sys(SYS_getpid), &local, 1, &remote, 1, 0) == 16
		       ? 0 : -1;
}

/* Frame-pointer walk from an interrupted context. Frames inside [lo, hi)
 * (the stack that holds the interrupted sp, from sp up: mapped) are read
 * directly; a frame pointer anywhere else (JIT code using rbp as a
 * register, a coroutine's stale first frame, a stack sonde does not know)
 * is read through the kernel, a few times per walk: no read can fault. Also
 * used for threads sonde found without pthread_create (foreign.c), with
 * probe 0 (no reads outside [lo, hi)). async-signal-safe. */
unsigned sd_unwind_fp_sigsafe(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, int probe,
			      uint64_t *pcs, unsigned max, uint8_t *flags)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	int budget = probe ? SD_FP_PROBES : 0;
	unsigned n = 0;
	pcs[n++] = pc;
	for (;;) {
		uintptr_t w[2];
		if (fp < sp || (fp & 7) || frame_read_sigsafe(fp, lo, hi, &budget, w) != 0)
			break;
		uintptr_t next_fp = w[0], ret = w[1];
		if (ret < 4096)
			break;
		if (n == max) { /* a frame beyond the cap: truncated, not merely max deep */
			*flags |= SD_FLAG_TRUNCATED;
			break;
		}
		pcs[n++] = ret;
		if (next_fp <= fp)
			break;
		sp = fp + 16;
		fp = next_fp;
	}
	return n;
}
