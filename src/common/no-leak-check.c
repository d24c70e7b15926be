/*
 * common/no-leak-check.c — the sanitizer options of the programs that lock
 * themselves down: LeakSanitizer examines the process with ptrace when it
 * exits (even from _exit), which their seccomp filters rightly kill, and
 * boxy-init's environment is empty, so ASAN_OPTIONS cannot reach it. A
 * sanitizer build of these does without leak checks. Linked by name into
 * each program that needs it (Makefile.am), never through libboxy.a, so the
 * daemon and the CLI keep theirs.
 */
#include <config.h>

#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);

/* Read by the ASan runtime before main. */
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int no_leak_check_unused;
#endif
