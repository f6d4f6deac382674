/* The server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), read
 * without terminating TLS: enough to check it against the name the
 * connection was admitted for. Pure code, fuzzed. */
#include "mediator.h"

#include <errno.h>
#include <string.h>

struct cur {
	const unsigned char *p;
	size_t n;
};

static int take(struct cur *c, size_t k, const unsigned char **out)
{
	if (c->n < k)
		return -EINVAL;
	*out = c->p;
	c->p += k;
	c->n -= k;
	return 0;
}

static int u8(struct cur *c, size_t *v)
{
	const unsigned char *p;

	if (take(c, 1, &p) < 0)
		return -EINVAL;
	*v = p[0];
	return 0;
}

static int u16(struct cur *c, size_t *v)
{
	const unsigned char *p;

	if (take(c, 2, &p) < 0)
		return -EINVAL;
	*v = (size_t)p[0] << 8 | p[1];
	return 0;
}

/* A vector with a 1- or 2-byte length: its contents as a cursor. */
static int vec(struct cur *c, int width, struct cur *out)
{
	size_t len;
	const unsigned char *p;

	if ((width == 1 ? u8(c, &len) : u16(c, &len)) < 0 || take(c, len, &p) < 0)
		return -EINVAL;
	out->p = p;
	out->n = len;
	return 0;
}

static int server_name(struct cur ext, char *name, size_t size)
{
	struct cur list, host;
	size_t type;

	if (vec(&ext, 2, &list) < 0 || ext.n)
		return -EINVAL;
	while (list.n) {
		if (u8(&list, &type) < 0 || vec(&list, 2, &host) < 0)
			return -EINVAL;
		if (type != 0)
			continue;
		if (host.n == 0 || host.n >= size)
			return -EINVAL;
		for (size_t i = 0; i < host.n; i++) {
			unsigned char ch = host.p[i];

			if (ch <= ' ' || ch >= 0x7f)
				return -EINVAL;
			name[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		}
		name[host.n] = '\0';
		return 0;
	}
	return -ENOENT;
}

int tls_client_hello_sni(const unsigned char *buf, size_t len, char *name, size_t size)
{
	struct cur rec = {buf, len}, hs, body, skip, exts;
	const unsigned char *p;
	size_t rlen, hlen;

	/* The record header: handshake (22), a legacy version 3.x, a length.
	 * The ClientHello must fit in the first record (it does, for every
	 * client we know; a split one is refused rather than reassembled). */
	if (len < 5)
		return -EAGAIN;
	if (buf[0] != 22 || buf[1] != 3)
		return -EINVAL;
	rlen = (size_t)buf[3] << 8 | buf[4];
	if (rlen < 4 || rlen > 16384)
		return -EINVAL;
	if (len < 5 + rlen)
		return -EAGAIN;
	rec.p = buf + 5;
	rec.n = rlen;
	if (take(&rec, 4, &p) < 0 || p[0] != 1) /* ClientHello */
		return -EINVAL;
	hlen = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (hlen > rec.n)
		return -EINVAL;
	hs.p = rec.p;
	hs.n = hlen;
	body = hs;
	if (take(&body, 2 + 32, &p) < 0 || vec(&body, 1, &skip) < 0 || vec(&body, 2, &skip) < 0 ||
	    vec(&body, 1, &skip) < 0)
		return -EINVAL;
	if (body.n == 0)
		return -ENOENT; /* no extensions at all */
	if (vec(&body, 2, &exts) < 0)
		return -EINVAL;
	while (exts.n) {
		size_t type;
		struct cur ext;

		if (u16(&exts, &type) < 0 || vec(&exts, 2, &ext) < 0)
			return -EINVAL;
		if (type == 0)
			return server_name(ext, name, size);
	}
	return -ENOENT;
}
