/*
 * fuzz-attrib.c — libFuzzer target for attribution's parsers of a sandbox's
 * /proc (src/sandbox/attrib-proc.c): socket-table rows, stat, status, cmdline,
 * environ, pip's build directories and metadata — text a payload writes (its
 * argv, environment, comm, directory names, PKG-INFO) or makes the kernel
 * write (its sockets).
 *
 * The first byte picks the parser, the rest is its input. Besides not
 * crashing: every string a parser returns is NUL-terminated within its
 * buffer, valid UTF-8 and free of control characters (it reaches screens and
 * JSON), and a parse is the same when repeated.
 */
#include "config.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "sandbox/attrib-proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parser's output string: terminated within n, valid UTF-8, no control character. */
static void clean_or_abort(const char *s, size_t n)
{
	const char *end = memchr(s, '\0', n);
	size_t len;

	if (!end)
		abort();
	len = (size_t)(end - s);
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t l = utf8_decode((const unsigned char *)s + i, len - i, &cp);

		if (l == 0 || unicode_is_control(cp))
			abort();
		i += l;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	char *z;

	if (size == 0)
		return 0;
	z = malloc(n + 1);
	if (!z)
		return 0;
	memcpy(z, in, n);
	z[n] = '\0';
	switch (data[0] % 9) {
	case 0: {
		struct attrib_sock s;
		struct net_addr a = { .family = AF_INET };

		if (attrib_sock_parse(in, n, data[0] & 0x10 ? AF_INET6 : AF_INET, &s)) {
			if (s.local.family != AF_INET && s.local.family != AF_INET6)
				abort();
			(void)attrib_sock_match(&s, data[0] & 0x20 ? 17 : 6, &a, s.lport, &a, s.rport);
		}
		/* The same bytes as a sock_diag reply (the kernel's, but read with bounds). */
		{
			uint64_t ino;
			uint32_t seq = 0;
			int r;

			if (n >= 12)
				memcpy(&seq, in + 8, sizeof(seq));
			r = attrib_diag_parse(in, n, seq, &ino);
			if (r < -1 || r > 1 || (r != 1 && ino != 0))
				abort();
		}
		break;
	}
	case 1: {
		struct attrib_stat st;

		if (attrib_stat_parse(in, n, &st))
			clean_or_abort(st.comm, sizeof(st.comm));
		break;
	}
	case 2: {
		int levels;

		(void)attrib_status_nspid(in, n, &levels);
		if (levels < 0)
			abort();
		break;
	}
	case 3: {
		struct attrib_argv a, b;

		attrib_cmdline_parse(in, n, &a);
		clean_or_abort(a.argv0, sizeof(a.argv0));
		clean_or_abort(a.cmdline, sizeof(a.cmdline));
		for (int i = 0; i < ATTRIB_ARGS_KEPT; i++)
			clean_or_abort(a.arg[i], sizeof(a.arg[i]));
		if (a.nargs < 0 || a.nargs > ATTRIB_ARGS_KEPT)
			abort();
		(void)attrib_manager_of(a.argv0, &a);
		attrib_cmdline_parse(in, n, &b);
		if (memcmp(&a, &b, sizeof(a)) != 0)
			abort();
		break;
	}
	case 4:
	case 5: {
		struct attrib_env e;

		attrib_environ_parse(in, n, data[0] % 9 == 5, &e);
		clean_or_abort(e.package, sizeof(e.package));
		clean_or_abort(e.version, sizeof(e.version));
		clean_or_abort(e.script, sizeof(e.script));
		break;
	}
	case 6: {
		char name[ATTRIB_PACKAGE_MAX];
		enum attrib_pipdir d = attrib_pip_dir(z, name, sizeof(name));

		clean_or_abort(name, sizeof(name));
		if (d == ATTRIB_PIPDIR_NAMED && !name[0])
			abort();
		break;
	}
	case 7:
	case 8: {
		char name[ATTRIB_PACKAGE_MAX], version[ATTRIB_VERSION_MAX];
		bool ok = data[0] % 9 == 7 ?
			attrib_pkginfo_parse(in, n, name, sizeof(name), version, sizeof(version)) :
			attrib_pyproject_parse(in, n, name, sizeof(name), version, sizeof(version));

		clean_or_abort(name, sizeof(name));
		clean_or_abort(version, sizeof(version));
		if (ok && !name[0])
			abort();
		if (ok)
			(void)attrib_pip_same_name(name, z);
		break;
	}
	}
	(void)attrib_socket_link(in, n);
	free(z);
	return 0;
}
