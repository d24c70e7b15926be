/*
 * spec/runspec-wire.c — encoding a run-spec for the daemon socket and decoding
 * it on the other side. Decoding re-validates every value through spec/values.h
 * (the binary forms a client sends are ignored where a text form exists:
 * a CIDR is re-parsed from its text, a host from its name), bounds every
 * count, and checks every enum, so a hostile client gets an error reply and
 * never a sandbox built from values the command line would have refused.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "spec/values.h"
#include "proto/msg-run.h"
#include "common/util.h"

#define MAX_LIST     1024
#define MAX_PATH_LEN 4096
#define MAX_ARG_LEN  (128u << 10)
#define MAX_ARGS     4096

void runspec_encode(struct wbuf *w, const struct runspec *rs)
{
	wire_put_str(w, rs->profile);
	wire_put_strv(w, rs->argv);
	wire_put_str(w, rs->workdir);
	wire_put_u8(w, (uint8_t)rs->net);
	wire_put_u32(w, (uint32_t)rs->nhosts);
	for (size_t i = 0; i < rs->nhosts; i++) {
		wire_put_str(w, rs->hosts[i].name);
		wire_put_u32(w, (uint32_t)rs->hosts[i].nports);
		for (size_t j = 0; j < rs->hosts[i].nports; j++)
			wire_put_u16(w, rs->hosts[i].ports[j]);
	}
	wire_put_u32(w, (uint32_t)rs->nports);
	for (size_t i = 0; i < rs->nports; i++)
		wire_put_u16(w, rs->ports[i]);
	wire_put_u32(w, (uint32_t)rs->ncidrs);
	for (size_t i = 0; i < rs->ncidrs; i++)
		wire_put_str(w, rs->cidrs[i].text);
	wire_put_u8(w, rs->tailscale);
	wire_put_u32(w, (uint32_t)rs->nmounts);
	for (size_t i = 0; i < rs->nmounts; i++) {
		wire_put_u8(w, (uint8_t)rs->mounts[i].kind);
		wire_put_str(w, rs->mounts[i].src);
		wire_put_str(w, rs->mounts[i].dst);
	}
	wire_put_u8(w, rs->allow_git_write);
	wire_put_u32(w, (uint32_t)rs->nenv);
	for (size_t i = 0; i < rs->nenv; i++) {
		wire_put_str(w, rs->env[i].name);
		wire_put_str(w, rs->env[i].value);
	}
	wire_put_u64(w, rs->memory);
	wire_put_u64(w, rs->pids);
	wire_put_u32(w, rs->cpus_milli);
	wire_put_u64(w, rs->timeout_ms);
	wire_put_str(w, rs->audit_log);
	wire_put_str(w, rs->net_log);
	wire_put_str(w, rs->pcap);
	wire_put_u64(w, rs->pcap_max);
	wire_put_u8(w, (uint8_t)rs->seccomp);
	wire_put_u8(w, rs->tty);
	wire_put_u8(w, rs->verbose);
	wire_put_u8(w, rs->detach);
	wire_put_u8(w, rs->raw_terminal);
}

static bool get_bool(struct rbuf *r)
{
	uint8_t v = wire_get_u8(r);

	if (v > 1)
		r->failed = true;
	return v == 1;
}

/* A count of list entries, bounded. */
static size_t get_count(struct rbuf *r, size_t max)
{
	uint32_t n = wire_get_u32(r);

	if (n > max) {
		r->failed = true;
		return 0;
	}
	return n;
}

static int bad(struct runspec *rs, char **err, const char *what)
{
	runspec_free(rs);
	return set_err(err, "malformed run request: %s", what);
}

int runspec_decode(struct rbuf *r, struct runspec *rs, char **err)
{
	char *e = NULL;
	size_t n;
	uint8_t v;

	runspec_init(rs);
	rs->profile = wire_get_str(r, MAX_PATH_LEN);
	rs->argv = wire_get_strv(r, MAX_ARGS, MAX_ARG_LEN);
	rs->workdir = wire_get_str(r, MAX_PATH_LEN);
	v = wire_get_u8(r);
	if (v > NET_NONE)
		return bad(rs, err, "network mode");
	rs->net = (enum net_mode)v;

	n = get_count(r, MAX_LIST);
	for (size_t i = 0; i < n && !r->failed; i++) {
		char *name = wire_get_str(r, 256);
		size_t np = get_count(r, 64);
		struct host_spec *h;

		if (!name)
			return bad(rs, err, "host");
		h = xappend(&rs->hosts, &rs->nhosts, sizeof(*rs->hosts));
		if (parse_host_spec(name, h, &e) < 0 || h->nports != 0) {
			free(name);
			free(e);
			return bad(rs, err, "host name");
		}
		free(name);
		for (size_t j = 0; j < np; j++) {
			uint16_t p = wire_get_u16(r);

			if (p == 0)
				return bad(rs, err, "host port");
			*(uint16_t *)xappend(&h->ports, &h->nports, sizeof(*h->ports)) = p;
		}
	}
	n = get_count(r, MAX_LIST);
	for (size_t i = 0; i < n; i++) {
		uint16_t p = wire_get_u16(r);

		if (p == 0)
			return bad(rs, err, "port");
		*(uint16_t *)xappend(&rs->ports, &rs->nports, sizeof(*rs->ports)) = p;
	}
	n = get_count(r, MAX_LIST);
	for (size_t i = 0; i < n && !r->failed; i++) {
		char *text = wire_get_str(r, 64);
		struct cidr *c;

		if (!text)
			return bad(rs, err, "cidr");
		c = xappend(&rs->cidrs, &rs->ncidrs, sizeof(*rs->cidrs));
		if (parse_cidr(text, c, &e) < 0) {
			free(text);
			free(e);
			return bad(rs, err, "cidr");
		}
		free(text);
	}
	rs->tailscale = get_bool(r);
	n = get_count(r, MAX_LIST);
	for (size_t i = 0; i < n && !r->failed; i++) {
		struct mount_spec *m = xappend(&rs->mounts, &rs->nmounts, sizeof(*rs->mounts));

		v = wire_get_u8(r);
		if (v > MOUNT_COPY_RO)
			return bad(rs, err, "mount kind");
		m->kind = (enum mount_kind)v;
		m->src = wire_get_str(r, MAX_PATH_LEN);
		m->dst = wire_get_str(r, MAX_PATH_LEN);
		if (!m->src || m->src[0] == '\0')
			return bad(rs, err, "mount source");
	}
	rs->allow_git_write = get_bool(r);
	n = get_count(r, MAX_LIST);
	for (size_t i = 0; i < n && !r->failed; i++) {
		char *name = wire_get_str(r, 256);
		char *value = wire_get_str(r, MAX_ARG_LEN);
		struct env_spec *es = xappend(&rs->env, &rs->nenv, sizeof(*rs->env));

		if (!name || parse_env_spec(name, es, &e) < 0 || es->value) {
			free(name);
			free(value);
			free(e);
			return bad(rs, err, "environment variable name");
		}
		free(name);
		es->value = value;
	}
	rs->memory = wire_get_u64(r);
	rs->pids = wire_get_u64(r);
	rs->cpus_milli = wire_get_u32(r);
	rs->timeout_ms = wire_get_u64(r);
	rs->audit_log = wire_get_str(r, MAX_PATH_LEN);
	rs->net_log = wire_get_str(r, MAX_PATH_LEN);
	rs->pcap = wire_get_str(r, MAX_PATH_LEN);
	rs->pcap_max = wire_get_u64(r);
	v = wire_get_u8(r);
	if (v > SECCOMP_COMPAT)
		return bad(rs, err, "seccomp mode");
	rs->seccomp = (enum seccomp_mode)v;
	rs->tty = get_bool(r);
	rs->verbose = get_bool(r);
	rs->detach = get_bool(r);
	rs->raw_terminal = get_bool(r);
	if (r->failed || !rs->argv || !rs->argv[0] || !rs->workdir || rs->workdir[0] != '/')
		return bad(rs, err, "fields missing or out of range");
	return 0;
}
