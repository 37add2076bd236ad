/* fpwalk.c - code whose frame pointer a frame-pointer walk must not follow
 * into memory it cannot read (tests/e2e/round3.sh, case fpwalk; issue 19
 * item 3). Run under SONDE_UNWIND=fp.
 *
 *   fpwalk jit    on a coroutine stack (makecontext), code that keeps rbp
 *                 pointing into a PROT_NONE page (as JIT code using rbp as
 *                 a general register may) while it computes for ~300 ms
 *   fpwalk coro   coroutines on stacks that are unmapped once they finish,
 *                 new ones made on fresh stacks: their first frames' saved
 *                 rbp is whatever rbp held at makecontext, a stale pointer
 *                 into a stack that is gone; ~300 ms of computing in them
 *
 * Prints "ok" and exits 0; without a careful walk, a sample faults (SIGSEGV).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))
#define STACK (256 * 1024)

static ucontext_t main_ctx, coro_ctx;
static char *none_page;
static volatile double sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Computes with rbp pointing into the PROT_NONE page. */
NOINLINE static void jit_code(double ms)
{
#if defined(__x86_64__)
	double t0 = cpu_ms();
	while (cpu_ms() - t0 < ms) {
		long n = 200000;
		__asm__ volatile("push %%rbp\n\t"
				 "mov %1, %%rbp\n\t"
				 "1: dec %0\n\t"
				 "jnz 1b\n\t"
				 "pop %%rbp"
				 : "+r"(n)
				 : "r"(none_page + 64)
				 : "memory", "cc");
	}
#else
	(void)ms;
#endif
}

static void jit_coro(void)
{
	jit_code(300);
}

NOINLINE static void work(double ms)
{
	double t0 = cpu_ms(), x = 0;
	while (cpu_ms() - t0 < ms)
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
	sink = x;
}

static ucontext_t template_ctx;

static void coro_body(void)
{
	work(10);
	swapcontext(&coro_ctx, &main_ctx);
	work(10);
	getcontext(&template_ctx); /* the next one's, rbp in this stack */
}

/* Takes the template context on its own stack (rbp there). */
NOINLINE static void coro_template(void)
{
	getcontext(&template_ctx);
}

static char *new_stack(void)
{
	char *s = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		       -1, 0);
	if (s == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "jit";
	/* first the page that must never be read, then (below it, as mmap
	 * goes down) the coroutine stacks: a walk from a coroutine's sp up to
	 * the thread's stack top crosses it */
	none_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none_page == MAP_FAILED)
		return 1;
	if (!strcmp(mode, "jit")) {
		char *s = new_stack();
		getcontext(&coro_ctx);
		coro_ctx.uc_stack.ss_sp = s;
		coro_ctx.uc_stack.ss_size = STACK;
		coro_ctx.uc_link = &main_ctx;
		makecontext(&coro_ctx, jit_coro, 0);
		swapcontext(&main_ctx, &coro_ctx);
		munmap(s, STACK);
	} else if (!strcmp(mode, "coro")) {
		/* each coroutine's context is made from one taken inside the
		 * previous coroutine, whose stack is gone by then: its saved rbp
		 * points there */
		char *volatile old = new_stack();
		getcontext(&coro_ctx);
		coro_ctx.uc_stack.ss_sp = old;
		coro_ctx.uc_stack.ss_size = STACK;
		coro_ctx.uc_link = &main_ctx;
		makecontext(&coro_ctx, coro_template, 0);
		swapcontext(&main_ctx, &coro_ctx);
		for (int i = 0; i < 15; i++) {
			char *s = new_stack(); /* before the old one goes: not its address */
			munmap(old, STACK);
			coro_ctx = template_ctx;
			coro_ctx.uc_stack.ss_sp = s;
			coro_ctx.uc_stack.ss_size = STACK;
			coro_ctx.uc_link = &main_ctx;
			makecontext(&coro_ctx, coro_body, 0);
			swapcontext(&main_ctx, &coro_ctx); /* runs to its first swap */
			swapcontext(&main_ctx, &coro_ctx); /* runs to its end */
			old = s;
		}
		munmap(old, STACK);
	} else {
		fprintf(stderr, "usage: fpwalk jit|coro\n");
		return 2;
	}
	printf("ok\n");
	return 0;
}
