/*
 * tests/lib/react-cont.c — a payload that fights a SIGSTOP freeze
 * (tests/lib/react.sh): N processes, each with three threads, every thread a
 * tight loop of kill(-1, SIGCONT) (every other process of the sandbox) and
 * kill(1, SIGCONT) (its init), every catchable signal caught or ignored.
 * It writes FILE once they all run. Harmless: it only signals its own sandbox.
 *
 *   react-cont N FILE
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void caught(int sig)
{
	(void)sig;
}

static void *wake(void *arg)
{
	sigset_t cont;

	(void)arg;
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	pthread_sigmask(SIG_UNBLOCK, &cont, NULL);
	for (;;) {
		kill(-1, SIGCONT);
		kill(1, SIGCONT);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	pthread_t t;
	FILE *f;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, s == SIGCONT || s == SIGTSTP ? SIG_IGN : caught);
	for (int i = 1; i < n; i++)
		if (fork() == 0)
			break;
	pthread_create(&t, NULL, wake, NULL);
	pthread_create(&t, NULL, wake, NULL);
	if (argc > 2 && (f = fopen(argv[2], "w")) != NULL)
		fclose(f);
	wake(NULL);
	return 0;
}
