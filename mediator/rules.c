/* What a mediated sandbox may reach, by name (policy network.allow), and
 * the synthetic addresses that carry a name through a connect() of a
 * client that resolved it through the stub. Pure code. */
#include "mediator.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

const struct policy_net_rule *mediator_rule(const struct policy *p, const char *name, uint16_t port)
{
	for (size_t i = 0; i < p->n_net_allow; i++) {
		const struct policy_net_rule *r = &p->net_allow[i];

		if (!policy_net_host_match(r->host, name))
			continue;
		for (size_t k = 0; k < r->n_ports; k++)
			if (r->ports[k] == port)
				return r;
	}
	return NULL;
}

static bool plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("-._~!$&'()*+,;=:@", c) != NULL;
}

/* One segment of a request (s, n bytes) against one of a template (t, tn
 * bytes): a literal is equal, a {name} takes any segment or one of its
 * values. */
static bool segment_ok(const struct policy_net_grant *g, const char *t, size_t tn, const char *s,
		       size_t n)
{
	if (t[0] != '{')
		return tn == n && memcmp(t, s, n) == 0;
	for (size_t v = 0; v < g->n_vars; v++) {
		const struct policy_net_grant_var *var = &g->vars[v];

		if (strlen(var->name) != tn - 2 || memcmp(var->name, t + 1, tn - 2) != 0)
			continue;
		if (var->n_values == 0)
			return true;
		for (size_t k = 0; k < var->n_values; k++)
			if (strlen(var->values[k]) == n && memcmp(var->values[k], s, n) == 0)
				return true;
		return false;
	}
	return false;
}

static bool grant_path_ok(const struct policy_net_grant *g, const char *path, size_t len)
{
	const char *t = g->path + 1, *s = path + 1, *pend = path + len;

	if (strcmp(g->path, "/") == 0)
		return len == 1;
	if (len == 1)
		return false;
	for (;;) {
		size_t tn = strcspn(t, "/");
		const char *slash = memchr(s, '/', (size_t)(pend - s));
		size_t n = slash ? (size_t)(slash - s) : (size_t)(pend - s);

		if (!segment_ok(g, t, tn, s, n))
			return false;
		if (!t[tn] || !slash)
			return !t[tn] && !slash; /* both end here */
		t += tn + 1;
		s = slash + 1;
	}
}

bool mediator_grant_allows(const struct policy_net_rule *r, const char *method, const char *target)
{
	return mediator_grant_find(r, method, target) >= 0;
}

long mediator_grant_find(const struct policy_net_rule *r, const char *method, const char *target)
{
	size_t len = strcspn(target, "?#");

	if (len == 0 || target[0] != '/')
		return -1;
	/* The path's form, once for every grant: segments of plain
	 * characters, none empty (but the root), none "." or "..". */
	for (size_t i = 1, seg = 1; i <= len; i++) {
		if (i == len || target[i] == '/') {
			size_t n = i - seg;

			if ((n == 0 && len > 1) || (n == 1 && target[seg] == '.') ||
			    (n == 2 && target[seg] == '.' && target[seg + 1] == '.'))
				return -1;
			seg = i + 1;
		} else if (!plain(target[i])) {
			return -1; /* '%' among them: an encoding could alias */
		}
	}
	for (size_t g = 0; g < r->n_grants; g++) {
		const struct policy_net_grant *gr = &r->grants[g];
		bool method_ok = false;

		for (size_t k = 0; k < gr->n_methods && !method_ok; k++)
			method_ok = strcmp(gr->methods[k], method) == 0;
		if (method_ok && grant_path_ok(gr, target, len))
			return (long)g;
	}
	return -1;
}

bool mediator_name_allowed(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		if (policy_net_host_match(p->net_allow[i].host, name))
			return true;
	return false;
}

const char *mediator_resolve_entry(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_net_resolve; i++)
		if (strcmp(p->net_resolve[i].host, name) == 0)
			return p->net_resolve[i].addr;
	return NULL;
}

static bool in4(uint32_t a, uint32_t net, int bits)
{
	return bits == 0 || (a >> (32 - bits)) == (net >> (32 - bits));
}

static bool public4(uint32_t a)
{
	static const struct {
		uint32_t net;
		int bits;
	} no[] = {
	    {0x00000000, 8},  /* "this network" */
	    {0x0a000000, 8},  /* RFC 1918 */
	    {0x64400000, 10}, /* CGNAT */
	    {0x7f000000, 8},  /* loopback */
	    {0xa9fe0000, 16}, /* link-local */
	    {0xac100000, 12}, /* RFC 1918 */
	    {0xc0000000, 24}, /* IETF protocol assignments */
	    {0xc0000200, 24}, /* TEST-NET-1 */
	    {0xc0a80000, 16}, /* RFC 1918 */
	    {0xc6120000, 15}, /* benchmarking: our synthetic addresses */
	    {0xc6336400, 24}, /* TEST-NET-2 */
	    {0xcb007100, 24}, /* TEST-NET-3 */
	    {0xe0000000, 4},  /* multicast */
	    {0xf0000000, 4},  /* reserved, broadcast */
	};

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (in4(a, no[i].net, no[i].bits))
			return false;
	return true;
}

bool mediator_addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return public4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6) {
		const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		static const unsigned char zero[15] = {0};

		if (memcmp(b, mapped, 12) == 0)
			return public4((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
				       (uint32_t)b[14] << 8 | b[15]);
		if (memcmp(b, zero, 15) == 0)
			return false; /* :: and ::1 */
		if ((b[0] & 0xfe) == 0xfc)
			return false; /* ULA */
		if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
			return false; /* link-local */
		if (b[0] == 0xff)
			return false; /* multicast */
		if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
			return false; /* documentation */
		if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b)
			return false; /* NAT64 */
		return true;
	}
	return false;
}

static const unsigned char ula[8] = {0xfd, 0x70, 0x61, 0x64, 0x64, 0x6f, 0x63, 0x6b};

void mediator_names_addr(size_t i, int family, unsigned char *out)
{
	size_t v = i + 1; /* 198.18.0.0 itself is not handed out */

	if (family == AF_INET) {
		out[0] = 198;
		out[1] = (unsigned char)(18 + ((v >> 16) & 1));
		out[2] = (unsigned char)(v >> 8);
		out[3] = (unsigned char)v;
		return;
	}
	memcpy(out, ula, 8);
	memset(out + 8, 0, 6);
	out[14] = (unsigned char)(v >> 8);
	out[15] = (unsigned char)v;
}

int mediator_names_add(struct mediator_names *m, const char *name)
{
	void *grown;

	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->name[i], name) == 0)
			return (int)i;
	if (m->n == MEDIATOR_NAMES_MAX)
		return -ENOSPC;
	if (strlen(name) >= sizeof(m->name[0]))
		return -EINVAL;
	grown = realloc(m->name, (m->n + 1) * sizeof(m->name[0]));
	if (!grown)
		return -ENOMEM;
	m->name = grown;
	strcpy(m->name[m->n], name);
	return (int)m->n++;
}

void mediator_names_free(struct mediator_names *m)
{
	free(m->name);
	m->name = NULL;
	m->n = 0;
}

const char *mediator_names_lookup(const struct mediator_names *m, const struct sockaddr *sa)
{
	unsigned char want[16];
	const unsigned char *got;
	size_t len;

	if (sa->sa_family == AF_INET) {
		got = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
		len = 4;
	} else if (sa->sa_family == AF_INET6) {
		got = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		len = 16;
	} else {
		return NULL;
	}
	for (size_t i = 0; i < m->n; i++) {
		mediator_names_addr(i, sa->sa_family, want);
		if (memcmp(want, got, len) == 0)
			return m->name[i];
	}
	return NULL;
}
