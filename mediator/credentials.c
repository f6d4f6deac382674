/* Brokered credentials (docs/network.md, "Brokered credentials"). The
 * workload only ever holds a placeholder; the secret is read here, from a
 * file outside the sandbox, into memory that is never dumped, and goes out
 * only in the header or query parameter of a request that a grant carrying
 * the credential covers. Nothing here logs or prints a secret: messages
 * name the variable, the secret's name or a line number, and the log gets
 * a fingerprint (HMAC-SHA-256 under the run's evidence key, 8 hex digits).
 *
 * The redaction of responses is redact.c's (its forms, its framing);
 * mediator_cred_redact() below is the plain scan that --weaken
 * redact-plain-only falls back to: the secret's bytes as they are in the
 * stream, also split across reads, and nothing else. */
#include "mediator.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/io.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

int mediator_secrets_find(const char *buf, size_t len, const char *name, const char **value,
			  size_t *vlen, size_t *line)
{
	size_t nlen = strlen(name), off = 0, entries = 0;
	bool found = false;

	*line = 0;
	while (off < len) {
		const char *s = buf + off, *nl = memchr(s, '\n', len - off);
		size_t n = nl ? (size_t)(nl - s) : len - off, k = 0;

		++*line;
		off += n + (nl ? 1 : 0);
		if (n == 0 || s[0] == '#')
			continue;
		while (k < n && name_char(s[k]))
			k++;
		if (k == 0 || k > POLICY_CRED_NAME_MAX || k == n || s[k] != '=' ||
		    n - k - 1 < CRED_SECRET_MIN || n - k - 1 > CRED_SECRET_MAX || ++entries > 256)
			return -EINVAL;
		for (size_t i = k + 1; i < n; i++)
			if (s[i] < 0x21 || s[i] > 0x7e)
				return -EINVAL;
		/* A name given twice is an error, not "the first wins". */
		for (size_t o = 0; o < off - n - (nl ? 1 : 0);) {
			const char *t = buf + o, *tn = memchr(t, '\n', len - o);
			size_t m = tn ? (size_t)(tn - t) : len - o;

			if (m > k && t[k] == '=' && memcmp(t, s, k) == 0)
				return -EINVAL;
			o += m + 1;
		}
		if (k == nlen && memcmp(s, name, k) == 0) {
			*value = s + k + 1;
			*vlen = n - k - 1;
			found = true;
		}
	}
	if (found)
		*line = 0;
	return found ? 0 : -ENOENT;
}

int mediator_credentials_add(struct mediator_credentials *cr, const char *env,
			     const char *placeholder, struct err *err)
{
	struct mediator_secret *s;

	if (cr->n == CRED_MAX)
		return err_set(err, ENOSPC, "config: more than %d credentials", CRED_MAX);
	if (strlen(env) > POLICY_CRED_NAME_MAX || strlen(placeholder) != CRED_PLACEHOLDER_LEN ||
	    strncmp(placeholder, "pdk_", 4) != 0 ||
	    strspn(placeholder + 4, "0123456789abcdef") != CRED_PLACEHOLDER_LEN - 4)
		return err_set(err, EINVAL, "config: bad placeholder for %s", env);
	s = &cr->s[cr->n++];
	snprintf(s->env, sizeof(s->env), "%s", env);
	snprintf(s->placeholder, sizeof(s->placeholder), "%s", placeholder);
	return 0;
}

static const struct policy_net_credential *first(const struct policy *p, const char *env,
						 size_t *rule, size_t *grant)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		for (size_t g = 0; g < p->net_allow[i].n_grants; g++) {
			const struct policy_net_credential *c =
			    p->net_allow[i].grants[g].credential;

			if (c && strcmp(c->env, env) == 0) {
				*rule = i;
				*grant = g;
				return c;
			}
		}
	return NULL;
}

/* The file, checked as paddock checked it (a regular file of ours, no
 * group or other bits, no symlink as its last component), into buf. */
static ssize_t read_secrets(const char *path, char *buf, size_t size, struct err *err)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return err_sys(err, errno, "secrets file %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size > (off_t)size) {
		close(fd);
		return err_set(err, EPERM,
			       "secrets file %s: must be a regular file of ours, mode 0600 (or "
			       "0400), at most %zu bytes",
			       path, size);
	}
	n = read_full(fd, buf, size);
	close(fd);
	return n < 0 ? err_sys(err, n, "secrets file %s", path) : n;
}

int mediator_credentials_load(struct mediator_credentials *cr, const char *path,
			      const struct policy *p, const unsigned char *key, struct err *err)
{
	size_t len = CRED_FILE_MAX + HTTP_HEAD_MAX + CRED_MAX * (CRED_SECRET_MAX + 1), line;
	char *file;
	ssize_t n;
	int r = 0;

	/* Outside the heap: never in a core dump, and kept in RAM if the
	 * limit lets us (RLIMIT_MEMLOCK; not having it is no error). */
	cr->region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cr->region == MAP_FAILED) {
		cr->region = NULL;
		return err_sys(err, errno, "credentials: mmap");
	}
	cr->region_len = len;
	if (madvise(cr->region, len, MADV_DONTDUMP) < 0)
		return err_sys(err, errno, "credentials: MADV_DONTDUMP");
	(void)mlock(cr->region, len);
	file = cr->region;
	cr->scratch = cr->region + CRED_FILE_MAX;
	cr->used = CRED_FILE_MAX + HTTP_HEAD_MAX;
	n = read_secrets(path, file, CRED_FILE_MAX, err);
	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < cr->n && r >= 0; i++) {
		struct mediator_secret *s = &cr->s[i];
		unsigned char mac[32];
		const char *v;
		size_t vlen, ri, gi;

		s->where = first(p, s->env, &ri, &gi);
		if (!s->where) {
			r = err_set(err, EINVAL, "config: no credential uses %s", s->env);
			break;
		}
		r = mediator_secrets_find(file, (size_t)n, s->where->secret, &v, &vlen, &line);
		if (r == -ENOENT)
			r = err_set(err, ENOENT,
				    "network.allow[%zu].grants[%zu].credential.secret: no secret "
				    "\"%s\" in %s",
				    ri, gi, s->where->secret, path);
		else if (r < 0)
			r = err_set(err, EINVAL,
				    "secrets file %s: line %zu is not NAME=VALUE (a name of "
				    "A-Za-z0-9_.-, a value of %d to %d visible characters), or its "
				    "name is given twice",
				    path, line, CRED_SECRET_MIN, CRED_SECRET_MAX);
		if (r < 0)
			break;
		s->value = cr->region + cr->used;
		memcpy(s->value, v, vlen);
		s->len = vlen;
		cr->used += vlen + 1;
		evidence_hmac(key, EVIDENCE_KEY_LEN, s->value, s->len, mac);
		for (int k = 0; k < 4; k++)
			snprintf(s->fingerprint + 2 * k, 3, "%02x", mac[k]);
	}
	explicit_bzero(file, CRED_FILE_MAX);
	/* Every credential of the policy has its placeholder. */
	for (size_t i = 0; r >= 0 && i < p->n_net_allow; i++)
		for (size_t g = 0; r >= 0 && g < p->net_allow[i].n_grants; g++) {
			const struct policy_net_credential *c =
			    p->net_allow[i].grants[g].credential;
			bool have = !c;

			for (size_t k = 0; !have && k < cr->n; k++)
				have = strcmp(cr->s[k].env, c->env) == 0;
			if (!have)
				r = err_set(err, EINVAL, "config: no placeholder for %s", c->env);
		}
	if (r >= 0 && (r = redact_forms_build(cr)) < 0)
		return err_sys(err, r, "credentials: the redaction's forms");
	return r < 0 ? r : 0;
}

void mediator_credentials_free(struct mediator_credentials *cr)
{
	if (!cr)
		return;
	redact_forms_free(cr);
	if (!cr->region)
		return;
	explicit_bzero(cr->region, cr->region_len);
	munmap(cr->region, cr->region_len);
	cr->region = NULL;
}

/* ------------------------------------------------------------ the swap */

struct out {
	char *d;
	size_t n, size;
	bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || n > o->size - o->n) {
		o->full = true;
		return;
	}
	memcpy(o->d + o->n, s, n);
	o->n += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* A secret in a query: every byte but the unreserved ones percent-encoded. */
static void put_encoded(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c)) {
			put(o, &c, 1);
		} else {
			char e[3] = {'%', hex[(unsigned char)c >> 4], hex[c & 15]};

			put(o, e, 3);
		}
	}
}

/* Does s[0..n) hold any placeholder of cr? */
static bool holds_placeholder(const struct mediator_credentials *cr, const char *s, size_t n)
{
	for (size_t i = 0; i < cr->n; i++)
		if (memmem(s, n, cr->s[i].placeholder, CRED_PLACEHOLDER_LEN))
			return true;
	return false;
}

static bool dropped_for_audience(const char *h, size_t n)
{
	static const char *const names[] = {"accept-encoding:", "range:", "if-range:", NULL};

	for (size_t i = 0; names[i]; i++)
		if (n >= strlen(names[i]) && strncasecmp(h, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* Does s[0..n) hold something of a placeholder's shape ("pdk_" and 32
 * lower-case hex digits) that is none of cr's? */
static bool foreign_placeholder(const struct mediator_credentials *cr, const char *s, size_t n)
{
	for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), "pdk_", 4)); p += 4) {
		size_t k = 4;
		bool ours = false;

		while (k < CRED_PLACEHOLDER_LEN && p + k < s + n &&
		       ((p[k] >= '0' && p[k] <= '9') || (p[k] >= 'a' && p[k] <= 'f')))
			k++;
		for (size_t i = 0; i < cr->n && !ours; i++)
			ours = memcmp(p, cr->s[i].placeholder, CRED_PLACEHOLDER_LEN) == 0;
		if (k == CRED_PLACEHOLDER_LEN && !ours)
			return true;
	}
	return false;
}

/* Which secrets apply to this request, each with where it goes. */
struct apply {
	const struct mediator_secret *s;
	const struct policy_net_credential *where;
	bool swapped;
};

static size_t applying(const struct mediator_credentials *cr, const struct policy_net_rule *r,
		       const char *method, const char *target, const char *head, size_t head_len,
		       struct apply *out)
{
	size_t n = 0;

	for (size_t k = 0; k < cr->n; k++) {
		const struct mediator_secret *s = &cr->s[k];
		const struct policy_net_credential *where = NULL;

		for (size_t g = 0; g < r->n_grants && !where; g++) {
			struct policy_net_rule one = *r;

			if (!r->grants[g].credential ||
			    strcmp(r->grants[g].credential->env, s->env))
				continue;
			one.grants = &r->grants[g];
			one.n_grants = 1;
			if (mediator_grant_allows(&one, method, target))
				where = r->grants[g].credential;
		}
		/* --weaken credential-any-audience: wherever it is presented. */
		if (!where && cr->any_audience &&
		    memmem(head, head_len, s->placeholder, CRED_PLACEHOLDER_LEN))
			where = s->where;
		if (where)
			out[n++] = (struct apply){.s = s, .where = where};
	}
	return n;
}

/* The target with each applying credential's query parameter rebuilt. */
static void put_target(const struct mediator_credentials *cr, struct out *o, const char *t,
		       size_t tn, struct apply *a, size_t na)
{
	const char *q = memchr(t, '?', tn), *end = t + tn;
	bool firstp = true;

	if (!q) {
		put(o, t, tn);
		return;
	}
	put(o, t, (size_t)(q - t));
	for (const char *p = q + 1; p <= end;) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		size_t pn = amp ? (size_t)(amp - p) : (size_t)(end - p);
		const char *eq = memchr(p, '=', pn);
		size_t kn = eq ? (size_t)(eq - p) : pn;
		struct apply *hit = NULL;

		for (size_t i = 0; i < na && !hit; i++)
			if (a[i].where->query && strlen(a[i].where->query) == kn &&
			    memcmp(a[i].where->query, p, kn) == 0)
				hit = &a[i];
		if (!hit || (hit->swapped && holds_placeholder(cr, p, pn))) {
			/* (a placeholder kept is refused below) */
			put(o, firstp ? "?" : "&", 1);
			put(o, p, pn);
			firstp = false;
		} else if (!hit->swapped && eq && pn - kn - 1 == CRED_PLACEHOLDER_LEN &&
			   memcmp(eq + 1, hit->s->placeholder, CRED_PLACEHOLDER_LEN) == 0) {
			put(o, firstp ? "?" : "&", 1);
			put(o, p, kn + 1);
			put_encoded(o, hit->s->value, hit->s->len);
			hit->swapped = true;
			firstp = false;
		} else if (holds_placeholder(cr, p, pn)) {
			put(o, firstp ? "?" : "&", 1);
			put(o, p, pn);
			firstp = false;
		} /* else: another value of the credential's parameter, dropped */
		if (!amp)
			break;
		p = amp + 1;
	}
}

/* One header line "Name: value" (as rewrite() writes them). */
static void put_header(const struct mediator_credentials *cr, struct out *o, const char *h,
		       size_t hn, struct apply *a, size_t na)
{
	const char *colon = memchr(h, ':', hn);
	size_t kn = colon ? (size_t)(colon - h) : hn;
	const char *v = colon ? colon + 2 : h + hn;
	size_t vn = colon && hn >= kn + 2 ? hn - kn - 2 : 0;

	for (size_t i = 0; i < na; i++) {
		const struct policy_net_credential *w = a[i].where;
		size_t pl;

		if (!w->header || strlen(w->header) != kn || strncasecmp(w->header, h, kn) != 0)
			continue;
		pl = strlen(w->prefix);
		if (!a[i].swapped && vn == pl + CRED_PLACEHOLDER_LEN &&
		    memcmp(v, w->prefix, pl) == 0 &&
		    memcmp(v + pl, a[i].s->placeholder, CRED_PLACEHOLDER_LEN) == 0) {
			put(o, h, kn + 2);
			puts_(o, w->prefix);
			put(o, a[i].s->value, a[i].s->len);
			puts_(o, "\r\n");
			a[i].swapped = true;
			return;
		}
		/* Any other value of it is the client's own: dropped; but a
		 * placeholder in the wrong form is kept, to be refused. */
		if (holds_placeholder(cr, v, vn))
			break;
		return;
	}
	put(o, h, hn);
	puts_(o, "\r\n");
}

int mediator_cred_swap(const struct mediator_credentials *cr, const struct policy_net_rule *r,
		       char *buf, size_t *len, size_t size, size_t head_len, char *note,
		       size_t note_size)
{
	struct apply a[CRED_MAX];
	char method[16], target[HTTP_LINE_MAX];
	struct out o = {.d = cr->scratch, .size = HTTP_HEAD_MAX};
	const char *sp1, *sp2, *line, *end = buf + head_len;
	size_t na, k = 0, rest = *len - head_len;
	bool audience = redact_rule_audience(r);

	note[0] = '\0';
	sp1 = memchr(buf, ' ', head_len);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(sp1 - buf) >= sizeof(method) ||
	    (size_t)(sp2 - sp1 - 1) >= sizeof(target) || head_len < 4 ||
	    memcmp(end - 4, "\r\n\r\n", 4) != 0)
		return -EINVAL;
	/* A placeholder that is none of ours: another session's (running or
	 * ended), replayed. Placeholders are random per session and only
	 * this mediator's own table swaps: refused, never dropped or passed
	 * on (the rebuilt head would drop it from a credential's header). */
	if (foreign_placeholder(cr, buf, head_len)) {
		snprintf(note, note_size, ",\"placeholder\":\"foreign\"");
		return -EACCES;
	}
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = '\0';
	memcpy(target, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	target[sp2 - sp1 - 1] = '\0';
	na = applying(cr, r, method, target, buf, head_len, a);
	put(&o, buf, (size_t)(sp1 - buf) + 1);
	put_target(cr, &o, target, strlen(target), a, na);
	line = memchr(sp2, '\n', (size_t)(end - sp2));
	if (!line)
		return -EINVAL;
	put(&o, sp2, (size_t)(line - sp2) + 1);
	for (line++; line < end - 2;) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);

		if (!eol)
			return -EINVAL;
		/* An audience is asked for an uncompressed answer: the
		 * redaction reads what it sends back (redact.c), and refuses
		 * a coded one. Without the header any coding would do (RFC
		 * 9110 12.5.3), hence "identity". Nor is it asked for a part
		 * (Range): two ranges of one echo would hand the workload a
		 * secret in two pieces that no scan of either could see. */
		if (!audience || !dropped_for_audience(line, (size_t)(eol - line)))
			put_header(cr, &o, line, (size_t)(eol - line), a, na);
		line = eol + 2;
	}
	if (audience)
		puts_(&o, "Accept-Encoding: identity\r\n");
	puts_(&o, "\r\n");
	if (o.full || o.n + rest > size)
		return -E2BIG;
	/* A placeholder still there was presented where no grant with its
	 * credential covers the request: the wrong host, method or path. */
	for (size_t i = 0; i < cr->n; i++)
		if (memmem(o.d, o.n, cr->s[i].placeholder, CRED_PLACEHOLDER_LEN)) {
			explicit_bzero(o.d, o.n);
			snprintf(note, note_size, ",\"credential\":\"%s\"", cr->s[i].env);
			return -EACCES;
		}
	for (size_t i = 0; i < na; i++)
		if (a[i].swapped && note_size > k)
			k += (size_t)snprintf(note + k, note_size - k,
					      ",\"credential\":\"%s\",\"fingerprint\":\"%s\"",
					      a[i].s->env, a[i].s->fingerprint);
	memmove(buf + o.n, buf + head_len, rest);
	memcpy(buf, o.d, o.n);
	*len = o.n + rest;
	explicit_bzero(o.d, o.n);
	return (int)o.n;
}

size_t mediator_cred_redact(const struct mediator_credentials *cr, char *buf, size_t len, bool eof,
			    unsigned long *count)
{
	size_t hold = 0;

	for (size_t i = 0; i < cr->n; i++) {
		const struct mediator_secret *s = &cr->s[i];
		char *p = buf;

		if (!s->len)
			continue;
		while ((p = memmem(p, len - (size_t)(p - buf), s->value, s->len))) {
			memset(p, '*', s->len);
			p += s->len;
			++*count;
		}
		for (size_t k = s->len - 1 < len ? s->len - 1 : len; !eof && k > hold; k--)
			if (memcmp(buf + len - k, s->value, k) == 0) {
				hold = k;
				break;
			}
	}
	return hold;
}
