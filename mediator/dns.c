/* The DNS stub's wire format (RFC 1035): one query in, one answer out. It
 * never forwards a query (but under --weaken dns-open, loop.c): it answers
 * allowed names with synthetic addresses and refuses the rest. Pure code,
 * fuzzed. */
#include "mediator.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dns_parse_upstream(const char *s, struct sockaddr_storage *sa, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	memset(sa, 0, sizeof(*sa));
	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL; /* an IPv6 literal needs its brackets */
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host) || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port == 0 || port > 65535)
		return -EINVAL;
	if (*s != '[') {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -EINVAL;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return 0;
	}
	{
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
}

int dns_parse_query(const unsigned char *buf, size_t len, struct dns_query *out)
{
	size_t off = 12, nlen = 0;

	memset(out, 0, sizeof(*out));
	if (len < 12 || len > DNS_MAX)
		return -EINVAL;
	/* QR 0, opcode QUERY; exactly one question, no answers or
	 * authority; additional only for EDNS (ignored). */
	if ((buf[2] & 0x80) || (buf[2] & 0x78) || buf[4] != 0 || buf[5] != 1 || buf[6] || buf[7] ||
	    buf[8] || buf[9] || buf[10] || buf[11] > 1)
		return -EINVAL;
	out->id = (uint16_t)(buf[0] << 8 | buf[1]);
	out->rd = buf[2] & 1;
	for (;;) {
		size_t l;

		if (off >= len)
			return -EINVAL;
		l = buf[off++];
		if (l == 0)
			break;
		if (l > 63 || off + l > len) /* no compression in a question */
			return -EINVAL;
		if (nlen + l + 1 > sizeof(out->name) - 1)
			return -EINVAL;
		if (nlen)
			out->name[nlen++] = '.';
		for (size_t i = 0; i < l; i++) {
			unsigned char c = buf[off + i];

			if (c == '.' || c <= ' ' || c >= 0x7f)
				return -EINVAL; /* such a name is on no list */
			out->name[nlen++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		off += l;
	}
	out->name[nlen] = '\0';
	if (nlen == 0 || off + 4 > len)
		return -EINVAL;
	out->qtype = (uint16_t)(buf[off] << 8 | buf[off + 1]);
	out->qclass = (uint16_t)(buf[off + 2] << 8 | buf[off + 3]);
	out->question_end = off + 4;
	return 0;
}

int dns_build_response(const unsigned char *query, const struct dns_query *q, int rcode,
		       const unsigned char *addr, size_t addr_len, unsigned char *out, size_t size)
{
	size_t n = q->question_end, an = addr ? 1 : 0;

	if (n + (addr ? 12 + addr_len : 0) > size)
		return -ENOSPC;
	memcpy(out, query, n);
	out[2] = (unsigned char)(0x80 | (q->rd ? 1 : 0)); /* QR, opcode 0, RD as asked */
	out[3] = (unsigned char)(0x80 | (rcode & 0xf));	  /* RA */
	out[6] = 0;
	out[7] = (unsigned char)an;
	out[8] = out[9] = out[10] = out[11] = 0; /* the EDNS record is not echoed */
	if (!addr)
		return (int)n;
	out[n++] = 0xc0; /* the name: a pointer to the question's */
	out[n++] = 12;
	out[n++] = (unsigned char)(q->qtype >> 8);
	out[n++] = (unsigned char)q->qtype;
	out[n++] = 0;
	out[n++] = 1; /* IN */
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 60; /* TTL */
	out[n++] = 0;
	out[n++] = (unsigned char)addr_len;
	memcpy(out + n, addr, addr_len);
	return (int)(n + addr_len);
}
