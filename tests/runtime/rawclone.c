/* rawclone.c - tasks not made by pthread_create, for tests/e2e/rawclone.sh:
 *
 *   a thread made by a raw clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|
 *   CLONE_THREAD|CLONE_SYSVSEM) without CLONE_SETTLS: it shares the main
 *   thread's TLS pointer; it spins in clone_thread_work for about 0.5 s of
 *   its own CPU time, measured by itself;
 *
 *   a child process made by clone(CLONE_VM|SIGCHLD): another pid sharing the
 *   program's memory; it spins in clone_vm_work for about 0.3 s of its CPU.
 *
 * The main thread computes meanwhile (main_work). stdout holds only lines
 * that do not depend on timing; stderr gets what each task measured:
 * "measured clone_thread_ns=N clone_vm_ns=M".
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))
#define STACK (1 << 20)

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


NOINLINE static void main_work(double s) { wl_burn(s); }
NOINLINE static void clone_thread_work(double s) { wl_burn(s); }
NOINLINE static void clone_vm_work(double s) { wl_burn(s); }

static _Atomic uint64_t thread_ns, vm_ns;
static pid_t thread_tid = 1; /* cleared by the kernel when the thread exits */

static int thread_fn(void *arg)
{
	(void)arg;
	clone_thread_work(0.5);
	atomic_store(&thread_ns, cpu_ns());
	return 0;
}

static int vm_fn(void *arg)
{
	(void)arg;
	clone_vm_work(0.3);
	atomic_store(&vm_ns, cpu_ns());
	return 0;
}

int main(void)
{
	char *s1 = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			-1, 0);
	char *s2 = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			-1, 0);
	if (s1 == MAP_FAILED || s2 == MAP_FAILED)
		return 1;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
	if (clone(thread_fn, s1 + STACK, flags, NULL, NULL, NULL, &thread_tid) < 0) {
		perror("clone thread");
		return 1;
	}
	pid_t child = clone(vm_fn, s2 + STACK, CLONE_VM | SIGCHLD, NULL);
	if (child < 0) {
		perror("clone vm");
		return 1;
	}
	main_work(0.3);
	/* The kernel clears thread_tid and wakes us when the thread is gone. */
	for (pid_t v; (v = __atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE)) != 0;)
		syscall(SYS_futex, &thread_tid, FUTEX_WAIT, v, NULL, NULL, 0);
	printf("clone thread done\n");
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
		printf("clone_vm child failed\n");
		return 1;
	}
	printf("clone_vm child status %d\n", WEXITSTATUS(status));
	fprintf(stderr, "measured clone_thread_ns=%llu clone_vm_ns=%llu\n",
		(unsigned long long)atomic_load(&thread_ns), (unsigned long long)atomic_load(&vm_ns));
	return 0;
}
