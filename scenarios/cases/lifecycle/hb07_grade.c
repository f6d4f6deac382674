/* HB-07's rules (hb07_grade.h). */
#include "hb07_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool hb07_lease_parse(const char *v, char *session, size_t ssize, unsigned *gen, char *nonce,
		      size_t nsize)
{
	bool have_s = false, have_g = false, have_n = false;
	const char *p = v;

	while (p && *p) {
		size_t len = strcspn(p, ";"), k;
		const char *eq;

		while (*p == ' ' && len) {
			p++;
			len--;
		}
		eq = memchr(p, '=', len);
		if (eq) {
			k = (size_t)(eq - p);
			size_t vl = len - k - 1;

			if (k == 7 && strncmp(p, "session", 7) == 0 && vl < ssize) {
				memcpy(session, eq + 1, vl);
				session[vl] = '\0';
				have_s = true;
			} else if (k == 3 && strncmp(p, "gen", 3) == 0) {
				char *end;
				unsigned long g = strtoul(eq + 1, &end, 10);

				have_g = end == eq + 1 + vl && vl > 0 && g < 1000000;
				*gen = (unsigned)g;
			} else if (k == 5 && strncmp(p, "nonce", 5) == 0 && vl < nsize) {
				memcpy(nonce, eq + 1, vl);
				nonce[vl] = '\0';
				have_n = vl > 0;
			}
		}
		p += len;
		if (*p == ';')
			p++;
	}
	return have_s && have_g && have_n;
}

bool hb07_accept(const struct hb07_nav *n, bool port_only)
{
	char session[64], nonce[64];
	unsigned gen = 0;

	if (!n->loaded || n->status != 200)
		return false;
	if (port_only)
		return (n->remote_port ? n->remote_port : n->url_port) == n->want.port;
	if (!n->want.nonce[0] ||
	    !hb07_lease_parse(n->lease, session, sizeof(session), &gen, nonce, sizeof(nonce)))
		return false;
	return strcmp(session, n->want.session) == 0 && gen == n->want.gen &&
	       strcmp(nonce, n->want.nonce) == 0;
}

void hb07_grade(const struct hb07_nav *v, size_t n, struct verdict *out)
{
	size_t unread = 0;

	if (n == 0) {
		verdict_set(out, GRADE_UNKNOWN, "no navigation was made", NULL);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].accepted && strcmp(v[i].marker, v[i].want.marker) != 0) {
			verdict_setf(out, GRADE_FAIL,
				     "%s: accepted for %s gen %u, but the page is %s (%s%s)",
				     v[i].what, v[i].want.session, v[i].want.gen,
				     v[i].marker[0] ? v[i].marker : "unmarked",
				     v[i].from_disk_cache	? "from the disk cache"
				     : v[i].from_service_worker ? "from a service worker"
								: "from the network",
				     v[i].remote_port ? "" : ", no remote port");
			return;
		}
		/* A refusal (421, 404) has no page to read. */
		if (v[i].loaded && v[i].status == 200 && !v[i].marker[0])
			unread++;
	}
	if (unread)
		verdict_setf(out, GRADE_UNKNOWN, "%zu navigation(s) with no marker read", unread);
	else
		verdict_set(out, GRADE_PASS, "every accepted result carries its own lease's marker",
			    NULL);
}

void hb07_grade_control(const struct hb07_nav *v, size_t n, struct verdict *out)
{
	size_t current = 0;

	for (size_t i = 0; i < n; i++) {
		if (strncmp(v[i].what, "current", 7) != 0)
			continue;
		current++;
		if (!v[i].accepted || strcmp(v[i].marker, v[i].want.marker) != 0) {
			verdict_setf(out, GRADE_FAIL,
				     "%s: not accepted with its marker %s (saw %s)", v[i].what,
				     v[i].want.marker, v[i].marker[0] ? v[i].marker : "none");
			return;
		}
	}
	if (current == 0)
		verdict_set(out, GRADE_UNKNOWN, "no current endpoint was validated", NULL);
	else
		verdict_setf(out, GRADE_PASS, "%zu current endpoint(s) reachable and accepted",
			     current);
}

void hb07_grade_evidence(const struct hb07_nav *v, size_t n, struct verdict *out)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].loaded && (!v[i].shot || (v[i].status == 200 && !v[i].marker[0]))) {
			verdict_setf(out, GRADE_UNKNOWN, "%s: %s missing", v[i].what,
				     v[i].shot ? "the marker" : "the screenshot");
			return;
		}
	if (n == 0)
		verdict_set(out, GRADE_UNKNOWN, "no navigation recorded", NULL);
	else
		verdict_set(out, GRADE_PASS,
			    "every navigation: address, lease, cache flags, marker, screenshot",
			    NULL);
}
