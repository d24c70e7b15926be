/*
 * fuzz-frame.c — libFuzzer target for boxy-net's frame input path: the
 * ingress filter (src/net/frame.c) and then lwIP itself (src/net/lwip.c and
 * the flows above it), as a payload writing
 * arbitrary frames to tap0 would drive them.
 *
 * One gateway lives for the whole run, so lwIP's state (listening pcbs,
 * half-open connections, held SYNs) accumulates across inputs as it would
 * in a long session. Its TAP output goes to /dev/null; what it asks the
 * broker is read back and discarded. An lwIP assertion is an abort(), so a
 * frame that trips one is a crash here.
 *
 * The input is split into frames: each starts with a 2-byte length. To make
 * the fuzzer's life easier, frames it writes with an all-zero source MAC
 * get a plausible Ethernet + IPv4/IPv6 header for the sandbox's address.
 * Every TAP read starts with a virtio-net header: when the length's top bit
 * is set the frame's first 10 bytes are that header, as the fuzzer wrote
 * them (a hostile one: flags, GSO fields, checksum offsets); otherwise a
 * zero header is put in front.
 */
#include "config.h"

#include <ev.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/gw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gw *gw;
static int broker_peer;

static void setup(void)
{
	int sv[2], tap = open("/dev/null", O_RDWR);

	if (tap < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	broker_peer = sv[1];
	gw = gw_create(ev_loop_new(EVFLAG_AUTO), sv[0], tap, NULL);
}

/* Make frame an IPv4 packet from the sandbox with valid lengths and checksums,
 * so that lwIP's own parsing (not just its checksum check) is exercised. */
static void fix_ipv4(uint8_t *f, size_t len)
{
	uint8_t *ip = f + 14, *l4 = ip + 20;
	size_t tot = len - 14, l4len = tot - 20;
	uint32_t sum = 0;
	uint16_t c;

	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[6] &= 0x40;                  /* no fragments: the filter would drop them */
	ip[7] = 0;
	ip[12] = 10; ip[13] = 0; ip[14] = 2; ip[15] = 15;
	ip[9] = ip[9] & 1 ? 6 : 17;
	ip[10] = ip[11] = 0;
	c = gw_checksum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	if (ip[9] == 17) {
		l4[4] = (uint8_t)(l4len >> 8);
		l4[5] = (uint8_t)l4len;
		l4[6] = l4[7] = 0;          /* no UDP checksum */
		return;
	}
	if (l4len < 20)
		return;
	l4[16] = l4[17] = 0;
	for (int i = 12; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	sum += 6 + (uint32_t)l4len;
	c = gw_checksum(l4, l4len, sum);
	l4[16] = (uint8_t)(c >> 8);
	l4[17] = (uint8_t)c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t head4[] = {
		0x02, 0xb0, 0xc5, 0, 0, 2, 0x52, 0x54, 0, 0x12, 0x34, 0x56, 0x08, 0x00,
	};
	uint8_t buf[GW_VNET_HLEN + 2048], drain[65536], *frame;

	if (!gw)
		setup();
	while (size >= 2) {
		int own_vnet = data[0] & 0x80;
		size_t len = (size_t)(data[0] << 8 | data[1]) % 2048, flen;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if (own_vnet) {
			memcpy(buf, data, len);
			frame = buf + GW_VNET_HLEN;
			flen = len >= GW_VNET_HLEN ? len - GW_VNET_HLEN : 0;
		} else {
			memset(buf, 0, GW_VNET_HLEN);
			memcpy(buf + GW_VNET_HLEN, data, len);
			frame = buf + GW_VNET_HLEN;
			flen = len;
		}
		/* a hint: a zero first byte means "make it an IPv4 frame from the sandbox" */
		if (flen >= 34 && frame[0] == 0) {
			memcpy(frame, head4, sizeof(head4));
			fix_ipv4(frame, flen);
		}
		gw_frame_input(gw, buf, own_vnet ? len : len + GW_VNET_HLEN);
		data += len;
		size -= len;
	}
	gw_housekeeping(gw);
	while (read(broker_peer, drain, sizeof(drain)) > 0)
		;
	return 0;
}
