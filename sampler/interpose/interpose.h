/* interpose.h - what the wrappers of sampler/interpose/ share: the libc and
 * loader entry points libsonde exports for the program. Private to these
 * files; the rest of the runtime reaches libc's own functions through
 * common/real.h, and the sampler's entry points here (sd_interpose_init,
 * sd_interpose_vpipe_probe, sd_handler_entry_note) through sampler.h.
 *
 * These run in the program's threads, in ordinary context (close() and
 * sigaction() may also be called from the program's own signal handlers: their
 * wrappers stay async-signal-safe on the path the program takes). Each one
 * forwards to the real function (common/real_table.h: dlsym(RTLD_NEXT),
 * resolved at start and on first use) and never changes what the program
 * observes. Which file guards what:
 *
 *   threads.c  pthread_create  every new thread is set up at birth and torn
 *                              down at exit; the program's second task
 *                              starts sonde's writer thread
 *              clone           CLONE_VM: the same (writer/thread.c, single
 *                              thread)
 *   dl.c       dlopen/dlclose  the module map and the handler's loader
 *              dlmopen         snapshot follow
 *              dl_iterate_phdr inside a sample, served from the snapshot: no
 *                              loader lock
 *   exec.c     exec*           the stream is flushed first; resumed if exec
 *                              fails
 *              _exit/_Exit     the stream is completed first
 *              fork/posix_spawn the child's pid is recorded (CHILD), and how
 *              wait*           the program saw it end when it reaps it: a
 *                              child that leaves no stream is still known to
 *                              the report
 *              chroot, unshare, the stream file is made first and the output
 *              setns           directory kept open, so no stream goes into
 *                              a jail
 *   threads.c, fork/posix_spawn, refused with EAGAIN (RLIMIT_NPROC): sonde's
 *   exec.c     pthread_create  writer threads give their slots back and the
 *                              call is made once more (writer/slots.c)
 *   fds.c      close/closefrom sonde's descriptors (and libunwind's pipe, see
 *              close_range     pipe2) are spared: their numbers are never
 *                              reused under us
 *              dup2/dup3       onto a sonde descriptor: honoured, sonde opens
 *                              anew
 *              syscall         SYS_close and SYS_close_range go through the
 *                              wrappers above; exit_group, chroot & co. and
 *                              timer_create as their wrappers; system calls
 *                              that wait are noted as below
 *              read/write      inside the handler (libunwind validating an
 *                              address through its pipe), only that pipe is
 *                              read or written: never a number a raw
 *                              close_range freed and the program reused
 *                              (tasks.c); under valgrind the address is read
 *                              through the kernel instead of written; and
 *                              noted as blocking calls
 *   signals.c  sigaction/signal the sampling signal stays sonde's;
 *                              SIGTERM/SIGINT/SIGHUP flush-then-default
 *                              handlers stay invisible
 *              sigaltstack     the program sees its own alternate stack only
 *              sigprocmask     sonde's signal blocked: the thread's sampling
 *              pthread_sigmask pauses
 *              timer_create    the program never lacks a timer sonde took
 *   blocking.c blocking calls  sleeps, event waits, locks, condition
 *                              variables, barriers, joins (and reads, waits
 *                              for children, syscall()'s waits) note where
 *                              and for how long the thread waits (wall-time)
 *
 * tests/unit/sampler/no_self_interpose.sh checks that these files call an
 * interposed name only in its wrapper, on the program's behalf.
 */
#ifndef SONDE_SAMPLER_INTERPOSE_H
#define SONDE_SAMPLER_INTERPOSE_H

#include <errno.h>
#include <stdatomic.h>

#include "common/real_table.h"
#include "include/sonde.h"
#include "sampler/sampler.h"

/* The real function behind the wrapper of `name`: resolved by RESOLVE
 * before each call, called through REAL (common/real_table.h). */
#define REAL(name) SD_REAL(name)
#define RESOLVE(name) SD_REAL_RESOLVE(name)

static inline int running(void)
{
	return atomic_load_explicit(&sd_rt.state, memory_order_relaxed) == SD_RUNNING;
}

/* In a vfork child (shared memory) or after a fork we do not follow, sonde
 * must do nothing at all. */
static inline int our_process(void)
{
	return sd_rt.pid != 0 && getpid() == sd_rt.pid;
}

/* The program's call that makes a task (fork, posix_spawn, pthread_create)
 * was refused with EAGAIN: 1 when sonde's writer threads gave their slots
 * back and the call should be made once more (*round counts the tries;
 * writer/slots.c). errno kept. async-signal-safe. */
static inline int slots_given_back(unsigned *round)
{
	return running() && our_process() && sd_writer_slots_retry_sigsafe(round);
}

/* ---- blocking.c: where the program waits (wall-time) ---------------------- */

/* Before a call that may block, made from return address ra with frame fp,
 * to the real function fn: records where the thread waits (its stack,
 * unwound here, kept while the call site stays the same) and when it began.
 * 1 when recorded (then blk_leave(1) after the call), 0 when not: no
 * wall-time source, sonde's own call (from its code, or the thread busy
 * in sonde or its handler), or a call nested in one recorded. Ordinary
 * context of the program's thread; errno kept. */
int sd_interpose_blk_enter(void *ra, void *fp, void *fn);

/* 1 when system call `no` (through libc's syscall(); op: its second
 * argument, the futex operation) is one that waits. async-signal-safe. */
int sd_interpose_blk_syscall(long no, long op);

/* After the call sd_interpose_blk_enter said 1 (`on`) for: the time it took
 * is the writer's to charge. errno kept. Inline: the wrappers of locks and
 * reads pay one branch when nothing was recorded. */
static inline void blk_leave(int on)
{
	if (!on)
		return;
	struct sd_thread *t = sd_tls_thread;
	if (!t)
		return;
	int e = errno;
	struct sd_ring *r = t->ring;
	uint64_t now = sd_now_ns_sigsafe();
	if (now > r->blk_t0)
		atomic_fetch_add_explicit(&r->blk_done_ns[atomic_load_explicit(&r->blk_cur,
									memory_order_relaxed)],
					  now - r->blk_t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->blk_seq, 1, memory_order_release);
	errno = e;
}

/* ---- exec.c ----------------------------------------------------------------- */

/* The process is about to change what paths name (chroot, unshare, setns,
 * and their system calls through syscall()): its stream file is made first,
 * in the real output directory, which is kept open. errno kept. */
void sd_interpose_pin_output(void);

#endif
