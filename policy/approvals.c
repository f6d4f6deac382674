/* The approvals of the release gate: digests, destinations, the
 * approvals file and the control request (approvals.h). Pure. */
#include "approvals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

int approval_parse_digest(const char *s, char out[65], const char **why)
{
	if (strncmp(s, "sha256:", 7) == 0)
		s += 7;
	*why = "is not a SHA-256 digest (64 hex digits, optionally \"sha256:\" first)";
	if (strlen(s) != 64)
		return -EINVAL;
	for (int i = 0; i < 64; i++) {
		if (hexval(s[i]) < 0)
			return -EINVAL;
		out[i] = "0123456789abcdef"[hexval(s[i])];
	}
	out[64] = '\0';
	return 0;
}

int approval_parse_dest(const char *s, struct approval_dest *out, const char **why)
{
	const char *colon = strchr(s, ':'), *slash;
	unsigned long port = 0;
	size_t n;

	*why = "is not a destination HOST:PORT/PATH (e.g. sink.test:8080/publish)";
	if (!colon)
		return -EINVAL;
	n = (size_t)(colon - s);
	if (n == 0 || n > POLICY_NET_NAME_MAX)
		return -EINVAL;
	memcpy(out->host, s, n);
	out->host[n] = '\0';
	if (!policy_net_host_valid(out->host, false)) {
		*why = "does not name a host as a rule does (lower-case labels of a-z, 0-9, '-')";
		return -EINVAL;
	}
	slash = colon + 1;
	while (*slash >= '0' && *slash <= '9' && port <= 65535)
		port = port * 10 + (unsigned long)(*slash++ - '0');
	if (slash == colon + 1 || port == 0 || port > 65535 || colon[1] == '0' || *slash != '/') {
		*why = "has no port from 1 to 65535 followed by a path (HOST:PORT/PATH)";
		return -EINVAL;
	}
	out->port = (uint16_t)port;
	n = strlen(slash);
	if (n > APPROVAL_TARGET_MAX) {
		*why = "has a path longer than 1024 bytes";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)slash[i] <= ' ' || (unsigned char)slash[i] >= 0x7f) {
			*why = "has a space, a control or a non-ASCII byte in its path";
			return -EINVAL;
		}
	memcpy(out->target, slash, n + 1);
	return 0;
}

int approval_dest_format(const struct approval_dest *d, char *buf, size_t size)
{
	return snprintf(buf, size, "%s:%u%s", d->host, d->port, d->target);
}

/* One "DIGEST DEST" (the line without its end, NUL-terminated). */
static int line(char *s, struct approval *a, const char **why)
{
	char *sep = s + strcspn(s, " \t");

	if (!*sep) {
		*why = "is not \"DIGEST HOST:PORT/PATH\"";
		return -EINVAL;
	}
	*sep = '\0';
	if (approval_parse_digest(s, a->digest, why) < 0)
		return -EINVAL;
	return approval_parse_dest(sep + 1, &a->dest, why);
}

int approvals_parse(const char *text, size_t len, struct approval **out, size_t *n, struct err *err)
{
	struct approval *v = NULL;
	size_t count = 0, lineno = 0;
	char buf[APPROVAL_TARGET_MAX + POLICY_NET_NAME_MAX + 96];

	*out = NULL;
	*n = 0;
	if (len > APPROVALS_FILE_MAX)
		return err_set(err, E2BIG, "larger than %d bytes", APPROVALS_FILE_MAX);
	if (memchr(text, '\0', len))
		return err_set(err, EINVAL, "has a NUL byte (not a text file)");
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - text) : len, k = end - off;
		const char *why;

		lineno++;
		if (k && text[off + k - 1] == '\r')
			k--;
		if (k >= sizeof(buf)) {
			free(v);
			return err_set(err, EINVAL, "line %zu: longer than %zu bytes", lineno,
				       sizeof(buf) - 1);
		}
		memcpy(buf, text + off, k);
		buf[k] = '\0';
		off = end + 1;
		if (k == 0 || buf[0] == '#')
			continue;
		if (count == APPROVALS_MAX) {
			free(v);
			return err_set(err, E2BIG, "line %zu: more than %d approvals", lineno,
				       APPROVALS_MAX);
		}
		if (count % 16 == 0) {
			struct approval *w = realloc(v, (count + 16) * sizeof(*v));

			if (!w) {
				free(v);
				return err_set(err, ENOMEM, "out of memory");
			}
			v = w;
		}
		if (line(buf, &v[count], &why) < 0) {
			free(v);
			return err_set(err, EINVAL, "line %zu: %s", lineno, why);
		}
		count++;
	}
	*out = v;
	*n = count;
	return 0;
}

int approval_parse_request(const char *s, struct approval *out, bool *has_dest, const char **why)
{
	char buf[APPROVAL_TARGET_MAX + POLICY_NET_NAME_MAX + 96];
	char *sp;

	*why = "is not \"approve DIGEST [HOST:PORT/PATH]\"";
	if (strncmp(s, "approve ", 8) != 0 || strlen(s + 8) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s + 8, strlen(s + 8) + 1);
	sp = strchr(buf, ' ');
	*has_dest = sp != NULL;
	if (sp)
		*sp = '\0';
	memset(out, 0, sizeof(*out));
	if (approval_parse_digest(buf, out->digest, why) < 0)
		return -EINVAL;
	return sp ? approval_parse_dest(sp + 1, &out->dest, why) : 0;
}
