/* sigpending.c - 16 idle threads, then 16 POSIX timers of the program's own
 * (tests/e2e/round3.sh, case sigpending; issue 19 item 4): under
 * RLIMIT_SIGPENDING 16 every timer_create succeeds without sonde, and must
 * with it (sonde's per-thread timers once took 8 of the 16). Prints how many
 * succeeded and failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static void *idle(void *a)
{
	(void)a;
	pause();
	return NULL;
}
int main(void) {
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, idle, NULL);
  int ok = 0, fail = 0;
  for (int i = 0; i < 16; i++) {
    timer_t id; struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2};
    if (timer_create(CLOCK_MONOTONIC, &sev, &id) == 0) ok++; else fail++;
  }
  printf("timers ok %d failed %d\n", ok, fail);
  return 0;
}
