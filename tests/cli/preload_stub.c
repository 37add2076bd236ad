/*
 * preload_stub.c: a harmless stand-in for libsonde.so (SONDE_LIB) in the `sonde run`
 * tests, which check the environment and exit status handling, not sampling. Built
 * without sanitizers: it is preloaded into /bin/sh, which has no sanitizer runtime.
 */
int sd_test_preload_stub(void);

int sd_test_preload_stub(void)
{
	return 0;
}
