/* ctorwrap_main.c - the program of tests/e2e/round3.sh's ctorwrap case:
 * linked to libsonde_ctorwrap.so (whose constructor and destructor sweep
 * every wrapped libc name), it runs the same sweep from main. */
void ctorwrap_sweep(const char *ph);

int main(void)
{
	ctorwrap_sweep("main");
	return 0;
}
