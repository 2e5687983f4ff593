// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A library that starts a thread from its constructor (as some runtimes
 * do): for seg-thread, which needs it (DT_NEEDED). Its constructor runs
 * before a preloaded library's, so the runtime finds two threads.
 */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle, NULL) == 0)
		pthread_detach(t);
}

int seg_threadlib_loaded(void);

int seg_threadlib_loaded(void)
{
	return 1;
}
