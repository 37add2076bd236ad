/*
 * libmkdup.c: a shared library for the analyzer tests with its own `static` function
 * named mk_alpha, like mkstream's global one, so that a profile has two functions of one
 * name in two modules (the report must tell them apart with a [module] suffix).
 */
volatile int mk_dup_sink;

static __attribute__((noinline)) void mk_alpha(void)
{
	mk_dup_sink = 7;
	mk_dup_sink += 77;
}

void mk_alpha_dup(void);
void *mk_dup_alpha_addr(void);

void mk_alpha_dup(void)
{
	mk_alpha();
}

void *mk_dup_alpha_addr(void)
{
	return (void *)&mk_alpha;
}
