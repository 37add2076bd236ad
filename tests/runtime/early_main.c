/* early_main.c - joins the thread that libearly's constructor started. */
#include <pthread.h>
#include <stdio.h>

extern pthread_t early_thread;

int main(void)
{
	pthread_join(early_thread, NULL);
	printf("early done\n");
	return 0;
}
