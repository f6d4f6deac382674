/* libFuzzer target for paddock-mediator's parsers of what a hostile
 * workload sends: the first byte picks one, the rest is its input.
 *   'h' http_parse_request() and, on success, the target and Host parsers
 *   'c' http_chunked_scan(), fed in two pieces
 *   's' tls_client_hello_sni()
 *   'd' the DNS stub (mediator_dns_answer()) against a fixed policy
 *   'u' dns_parse_upstream() (PADDOCK_DNS_UPSTREAM, --weaken dns-open)
 *   'g' mediator_grant_allows(): "METHOD\nTARGET" against fixed grants
 *   'p' policy_grant_path_check(): a path template
 *   'a' approvals_parse(): an approvals file (paddock run --approvals)
 *   'v' approval_parse_request() and its digest and destination parts
 *       (paddock approve's argument forms, the control channel)
 *   'b' gate_body_feed(): a chunked body in two pieces, checked against
 *       http_chunked_scan() (the same count of body bytes, the same end)
 *   'r' http_parse_status(): an upstream's response (HB-23)
 *   'k' attempts_key() and attempts_admit() of a request head and body,
 *       then attempts_response() of the same bytes as its response
 *   'K' mediator_secrets_find(): a secrets file's text
 *   'w' mediator_cred_swap(): a rewritten request head (and body bytes)
 *       against fixed credentials; a placeholder left is a refusal
 *   'R' mediator_cred_redact(): an upstream stream in two reads, the
 *       released bytes checked to hold no secret (abort() if they do)
 *   'x' redact_scan(): an upstream's response (or raw stream) in reads of
 *       a size the input picks, framed as HTTP/1.1; the released bytes
 *       hold no secret, raw, hex or base64 (abort() if they do)
 *   'm' meter_bound() and meter_op_key() of a request head and body
 *       against fixed prices (metered rules); a bound above its price's
 *       largest is an abort()
 *   'M' meter_charge() of an upstream's response, in two reads, for a
 *       charge header and a charge JSON member; a charge past the
 *       credits limit is an abort()
 *   'L' lookup_request() with the input as the Idempotency-Key: the lookup
 *       must parse as one GET of the lookup's path, its target free of
 *       spaces, CR and LF whatever the key (else abort())
 *   'l' lookup_verdict() of a receiver's answer to a lookup, for a charge
 *       header and a charge member; a charge past the limit is an abort()
 *   clang -fsanitize=fuzzer,address,undefined ... (make fuzz FUZZ=mediator)
 * Built with -DFUZZ_ONLY="'h'" (make fuzz FUZZ=mediator FUZZ_ONLY=h) every
 * input goes to that one parser: a run spent on it alone.
 * Built with replay.c instead, make unit runs tests/data/mediator through it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../mediator/mediator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The policy a target's fixture stands on: parsed once, and a fixture that
 * does not parse is a broken target, not a finding. */
static struct policy *load(const char *json)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	struct policy *p = NULL;
	struct err err = {0};

	if (policy_load_buffer(json, strlen(json), &vars, &p, &err) < 0)
		abort();
	return p;
}

static struct policy *policy(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":["
	    "{\"host\":\"api.example.com\",\"ports\":[443],\"protocol\":\"tls\"},"
	    "{\"host\":\"*.pkg.test\",\"ports\":[443],\"protocol\":\"tls\"}]}}";
	static struct policy *p;

	if (!p)
		p = load(json);
	return p;
}

static const struct policy_net_rule *granted(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"s.test\","
	    "\"ports\":[80],\"protocol\":\"http\",\"grants\":["
	    "{\"methods\":[\"GET\",\"PUT\"],\"path\":\"/t/{tenant}/o/{id}\","
	    "\"values\":{\"tenant\":[\"a\",\"b-1\"]}},{\"methods\":[\"POST\"],\"path\":\"/\"}]}]}}";
	static struct policy *p;

	if (!p)
		p = load(json);
	return &p->net_allow[0];
}

static void grant(const char *buf, size_t n)
{
	char *s = strndup(buf, n), *nl;
	const char *why;

	if (!s)
		return;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		(void)mediator_grant_allows(granted(), s, nl + 1);
	}
	(void)policy_grant_path_check(s, &why);
	free(s);
}

/* Two brokered secrets (a header and a query one) without a secrets
 * file: the values set by hand, the scratch buffer malloc'd. */
static struct mediator_credentials *creds(const struct policy_net_rule **rule)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"s.test\","
	    "\"ports\":[80],\"protocol\":\"http\",\"grants\":["
	    "{\"methods\":[\"GET\"],\"path\":\"/v/{id}\",\"credential\":{\"secret\":\"a\","
	    "\"env\":\"A\",\"header\":\"Authorization\",\"prefix\":\"Bearer \"}},"
	    "{\"methods\":[\"GET\"],\"path\":\"/q\",\"credential\":{\"secret\":\"b\","
	    "\"env\":\"B\",\"query\":\"key\"}},{\"methods\":[\"POST\"],\"path\":\"/v/{id}\"}]}]}}";
	static struct mediator_credentials cr;
	static struct policy *p;
	static char va[] = "sekret-AAAA", vb[] = "s&k=t%B-bb";
	struct err err = {0};

	if (!p) {
		p = load(json);
		if (mediator_credentials_add(&cr, "A", "pdk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					     &err) < 0 ||
		    mediator_credentials_add(&cr, "B", "pdk_0123456789abcdef0123456789abcdef",
					     &err) < 0)
			abort();
		cr.scratch = malloc(HTTP_HEAD_MAX);
		if (!cr.scratch)
			abort();
		cr.s[0].value = va;
		cr.s[0].len = strlen(va);
		cr.s[0].where = p->net_allow[0].grants[0].credential;
		cr.s[1].value = vb;
		cr.s[1].len = strlen(vb);
		cr.s[1].where = p->net_allow[0].grants[1].credential;
		if (redact_forms_build(&cr) < 0)
			abort();
	}
	*rule = &p->net_allow[0];
	return &cr;
}

static void swap(const char *in, size_t n)
{
	const struct policy_net_rule *rule;
	struct mediator_credentials *cr = creds(&rule);
	static char buf[HTTP_HEAD_MAX];
	const char *end;
	size_t len = n, head;
	char note[192];

	if (n > sizeof(buf))
		return;
	memcpy(buf, in, n);
	end = memmem(buf, n, "\r\n\r\n", 4);
	head = end ? (size_t)(end - buf) + 4 : n;
	cr->any_audience = n & 1;
	(void)mediator_cred_swap(cr, rule, buf, &len, sizeof(buf), head, note, sizeof(note));
}

static void redact(const char *in, size_t n)
{
	const struct policy_net_rule *rule;
	const struct mediator_credentials *cr = creds(&rule);
	char *buf = malloc(n + 1), *out = malloc(n + 1);
	size_t cut = n ? (unsigned char)in[0] % n : 0, hold, got = 0;
	unsigned long count = 0;

	if (!buf || !out)
		abort();
	/* Read one: [1, cut); released all but the held tail. Read two:
	 * the rest, at the end of the stream. */
	memcpy(buf, in, cut);
	hold = mediator_cred_redact(cr, buf, cut, false, &count);
	if (hold > cut)
		abort();
	memcpy(out, buf, cut - hold);
	got = cut - hold;
	memmove(buf, buf + cut - hold, hold);
	memcpy(buf + hold, in + cut, n - cut);
	if (mediator_cred_redact(cr, buf, hold + n - cut, true, &count) != 0)
		abort();
	memcpy(out + got, buf, hold + n - cut);
	got += hold + n - cut;
	for (size_t i = 0; i < cr->n; i++)
		if (memmem(out, got, cr->s[i].value, cr->s[i].len))
			abort(); /* a secret went back to the workload */
	free(buf);
	free(out);
}

/* redact_scan(): the first byte the size of each read (1 to 64), the
 * second the flags (http, HEAD, strict), the rest an upstream's stream, as
 * loop.c relays it (a buffer of HTTP_HEAD_MAX bytes, released all but the
 * held tail; a refusal or a buffer all held cuts it). What was released
 * holds no secret as it is, in hex or in base64 (the forms of the wire
 * view: every occurrence lies within one run of scanned bytes, framing
 * never inside one): abort() if it does. */
static void redact_framed(const char *in, size_t n)
{
	const struct policy_net_rule *rule;
	const struct mediator_credentials *cr = creds(&rule);
	static char buf[HTTP_HEAD_MAX];
	size_t rs, len = 0, fed = 0, got = 0;
	struct redact r;
	uint64_t base = 0;
	char *out, *lower, *std, hex[64];
	unsigned flags;

	if (n < 2)
		return;
	rs = 1 + (unsigned char)in[0] % 64;
	flags = (unsigned char)in[1];
	in += 2;
	n -= 2;
	out = malloc(n + 1);
	if (!out || redact_init(&r, cr, flags & 1, flags & 2, flags & 4) < 0)
		abort();
	for (;;) {
		size_t take = n - fed < rs ? n - fed : rs;
		bool eof;
		long h;

		if (take > sizeof(buf) - len)
			take = sizeof(buf) - len;
		memcpy(buf + len, in + fed, take);
		len += take;
		fed += take;
		eof = fed == n;
		h = redact_scan(&r, buf, len, base, eof);
		if (h < 0 || (size_t)h > len || (eof && h) || (!eof && (size_t)h == sizeof(buf)))
			break;
		memcpy(out + got, buf, len - (size_t)h);
		got += len - (size_t)h;
		base += len - (size_t)h;
		memmove(buf, buf + len - (size_t)h, (size_t)h);
		len = (size_t)h;
		if (eof)
			break;
	}
	redact_free(&r);
	/* The output folded as the forms are (hex to lower case, base64's
	 * url-safe alphabet to the standard one). */
	lower = malloc(got + 1);
	std = malloc(got + 1);
	if (!lower || !std)
		abort();
	for (size_t k = 0; k < got; k++) {
		char ch = out[k];

		lower[k] = ch >= 'A' && ch <= 'F' ? (char)(ch | 0x20) : ch;
		std[k] = ch == '-' ? '+' : ch == '_' ? '/' : ch;
	}
	for (size_t i = 0; i < cr->n; i++) {
		for (size_t k = 0; k < cr->s[i].len; k++)
			snprintf(hex + 2 * k, 3, "%02x", (unsigned char)cr->s[i].value[k]);
		if (memmem(out, got, cr->s[i].value, cr->s[i].len) ||
		    memmem(lower, got, hex, 2 * cr->s[i].len))
			abort(); /* a secret went back to the workload */
		for (unsigned f = REDACT_FORM_B64; f < REDACT_FORMS; f++)
			if (memmem(std, got, cr->s[i].form[f].p, cr->s[i].form[f].n))
				abort(); /* its base64 did */
	}
	free(lower);
	free(std);
	free(out);
}

static void secrets(const char *in, size_t n)
{
	const char *v;
	size_t vlen, line;

	(void)mediator_secrets_find(in, n, "saas", &v, &vlen, &line);
	(void)mediator_secrets_find(in, n, "a", &v, &vlen, &line);
}

static void http(const char *buf, size_t n)
{
	struct http_request rq;
	const char *why, *path;
	char name[POLICY_NET_NAME_MAX + 8];
	uint16_t port;

	if (http_parse_request(buf, n, &rq, &why) <= 0)
		return;
	(void)http_target_absolute(rq.target, name, sizeof(name), &port, &path);
	(void)http_target_authority(rq.target, name, sizeof(name), &port);
	(void)http_host_split(rq.host, name, sizeof(name), &port);
}

static void chunked(const char *buf, size_t n)
{
	struct http_chunked c = {0};
	long k = http_chunked_scan(&c, buf, n / 2);

	if (k >= 0 && !c.done)
		(void)http_chunked_scan(&c, buf + n / 2, n - n / 2);
}

static void approvals(const char *buf, size_t n)
{
	struct approval *a = NULL;
	struct err err = {0};
	size_t count = 0;

	if (approvals_parse(buf, n, &a, &count, &err) == 0 && count > APPROVALS_MAX)
		abort();
	free(a);
}

static void approve(const char *buf, size_t n)
{
	char *s = strndup(buf, n), out[65];
	struct approval a;
	struct approval_dest d;
	const char *why;
	bool has_dest;

	if (!s)
		return;
	if (approval_parse_request(s, &a, &has_dest, &why) == 0 && strlen(a.digest) != 64)
		abort();
	(void)approval_parse_digest(s, out, &why);
	if (approval_parse_dest(s, &d, &why) == 0 && d.target[0] != '/')
		abort();
	free(s);
}

/* The gate's body reader and the relay's scanner agree on every input. */
static void body(const char *buf, size_t n)
{
	struct http_chunked c = {0};
	struct gate_body b;
	long k1, k2 = 0, s1, s2 = 0;
	char hex[65];

	gate_body_init(&b, true, 0);
	k1 = gate_body_feed(&b, buf, n / 2, GATE_BODY_MAX);
	s1 = http_chunked_scan(&c, buf, n / 2);
	if ((k1 < 0) != (s1 < 0) || (k1 >= 0 && k1 != s1) || (k1 >= 0 && b.done != c.done))
		abort();
	if (k1 >= 0 && !b.done) {
		k2 = gate_body_feed(&b, buf + n / 2, n - n / 2, GATE_BODY_MAX);
		s2 = http_chunked_scan(&c, buf + n / 2, n - n / 2);
		if ((k2 < 0) != (s2 < 0) || (k2 >= 0 && (k2 != s2 || b.done != c.done)))
			abort();
	}
	/* The entity is never more than the wire bytes it came in (an error
	 * leaves the last piece's entity bytes unframed: not checked). */
	if (k1 >= 0 && k2 >= 0 && b.ent_len > b.raw_len)
		abort();
	gate_body_digest(&b, hex);
	gate_body_free(&b);
}

static void dns(const unsigned char *buf, size_t n)
{
	struct mediator_config cfg = {.policy = policy(), .session = "f", .log_fd = -1};
	struct mediator *m = NULL;
	unsigned char out[DNS_MAX];

	if (mediator_new(&cfg, &m) < 0)
		return;
	(void)mediator_dns_answer(m, buf, n, out, sizeof(out));
	mediator_free(m);
}

static const struct policy *budgeted(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"s.test\","
	    "\"ports\":[80],\"protocol\":\"http\",\"tool\":true,\"attempts\":2,\"deadline\":"
	    "\"1s\",\"grants\":[{\"methods\":[\"POST\",\"GET\"],\"path\":\"/"
	    "{x}\",\"attempts\":3}]}]}}";
	static struct policy *p;

	if (!p)
		p = load(json);
	return p;
}

static const struct policy *metered(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"m.test\","
	    "\"ports\":[80],\"protocol\":\"http\",\"metered\":{\"budget\":\"b\",\"cap\":10,"
	    "\"charge\":{\"header\":\"X-Charge\"},\"price\":4,\"lookup\":{\"request\":"
	    "\"GET /v1/receipts/{key}?full=1\",\"timeout\":\"2s\"}},\"grants\":[{\"methods\":"
	    "[\"POST\"],\"path\":\"/c\",\"metered\":{\"price\":{\"field\":\"max_tokens\","
	    "\"per\":3,\"base\":2,\"max\":1000}}},{\"methods\":[\"GET\",\"POST\"],\"path\":"
	    "\"/{x}\"}]},{\"host\":\"f.test\",\"ports\":[80],\"protocol\":\"http\","
	    "\"metered\":{\"budget\":\"b\",\"cap\":10,\"charge\":{\"field\":\"credits\"}}}]}}";
	static struct policy *p;

	if (!p)
		p = load(json);
	return p;
}

static void meter(const char *buf, size_t n)
{
	const struct policy_net_rule *r = &metered()->net_allow[0];
	struct http_request rq;
	const char *why;
	char key[65];
	uint64_t b;

	if (http_parse_request(buf, n, &rq, &why) <= 0)
		return;
	(void)meter_op_key(&rq, buf, "b", "m.test", 80, key);
	if (meter_bound(policy_meter_price(r, mediator_grant_find(r, rq.method, rq.target)), &rq,
			buf, n, n & 1, &b) == 0 &&
	    b > 2 + 3 * 1000)
		abort();
}

static void charge(const char *buf, size_t n)
{
	const struct policy *p = metered();
	size_t cut = n ? (unsigned char)buf[0] % n : 0;
	uint64_t c = 0;

	for (int k = 0; k < 2; k++) {
		const struct policy_net_meter *m = p->net_allow[k].meter;

		/* The first read, then all of it (the loop's calls). */
		if (meter_charge(m, buf, cut, false, false, &c) == 0 &&
		    c > POLICY_METER_CREDITS_MAX)
			abort();
		if (meter_charge(m, buf, n, true, n & 1, &c) == 0 && c > POLICY_METER_CREDITS_MAX)
			abort();
	}
}

static void lookup(const char *buf, size_t n)
{
	const struct policy_net_lookup *lk = &metered()->net_allow[0].meter->lookup;
	struct http_request rq;
	const char *why;
	char out[2048];
	int w = lookup_request(lk, "m.test", 80, buf, n, "adm-1", out, sizeof(out));

	if (w < 0)
		return;
	if (http_parse_request(out, (size_t)w, &rq, &why) != w || strcmp(rq.method, "GET") != 0 ||
	    strncmp(rq.target, "/v1/receipts/", 13) != 0 || strpbrk(rq.target, " \r\n#") ||
	    !strstr(rq.target, "?full=1"))
		abort();
}

static void verdict(const char *buf, size_t n)
{
	const struct policy *p = metered();
	unsigned st;
	bool stated;
	uint64_t c = 0;

	for (int k = 0; k < 2; k++)
		if (lookup_verdict(p->net_allow[k].meter, buf, n, n & 1, &st, &stated, &c) ==
			LOOKUP_FOUND &&
		    stated && c > POLICY_METER_CREDITS_MAX)
			abort();
}

static void attempt(const char *buf, size_t n)
{
	static struct attempts t; /* kept across inputs: a full table too */
	const struct policy_net_rule *r = &budgeted()->net_allow[0];
	struct http_request rq;
	struct attempt_conn ac;
	enum mediator_decision d;
	enum denial_class cls;
	unsigned char key[32];
	unsigned st;
	const char *why;

	if (http_parse_request(buf, n, &rq, &why) <= 0)
		return;
	(void)attempts_key(&rq, buf, n, "s.test", 80, rq.target, 0, 0, key);
	if (attempts_admit(&t, r, mediator_grant_find(r, rq.method, rq.target), &rq, buf, n, n & 1,
			   "s.test", 80, rq.target, n, false, &ac, &d) != 0 ||
	    !ac.hold)
		return;
	if (attempts_response(&t, &ac, buf, n, n & 2, n & 4, false, &st, &cls) == ATTEMPTS_WAIT)
		attempts_end(&t, &ac, ATTEMPT_UNKNOWN);
}

/* A job's id and status ('j', 'J'): what a submission and a status
 * response are parsed into (jobs.c); the id goes into a path, so it must
 * stay within its alphabet; a target built from it must fit. */
static void job_id(const char *buf, size_t n)
{
	char id[JOB_ID_MAX + 1], target[POLICY_JOB_PATH_MAX + JOB_ID_MAX + 8];

	if (jobs_parse_id(buf, n, id) < 0)
		return;
	if (strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		strlen(id) ||
	    !id[0] || jobs_target("/v1/jobs/{id}/cancel", id, target, sizeof(target)) < 0)
		abort();
}

static void job_status(const char *buf, size_t n)
{
	char state[32];
	uint64_t charge = 0;
	bool has = false;
	unsigned st = 0;

	if (jobs_parse_status(buf, n, &st, state, &charge, &has) == 0 &&
	    (!state[0] || (has && charge > POLICY_METER_CREDITS_MAX)))
		abort();
	(void)jobs_state_ended(state);
}

/* An adapter rule's request ('A'): both shapes over the same bytes, and
 * the grant over what either parsed. */
static const struct policy *adapters(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"actions\":{\"models\":"
	    "[\"small\"],\"tools\":[\"search\"]},\"allow\":[{\"host\":\"o.test\",\"ports\":"
	    "[80],\"protocol\":\"http\",\"adapter\":\"openai\"},{\"host\":\"a.test\","
	    "\"ports\":[80],\"protocol\":\"http\",\"adapter\":\"anthropic\"}]}}";
	static struct policy *p;

	if (!p)
		p = load(json);
	return p;
}

static void adapter(const char *buf, size_t n)
{
	const struct policy *p = adapters();
	struct http_request rq;
	struct adapter_action a;
	const char *why;
	char out[1024];

	if (http_parse_request(buf, n, &rq, &why) <= 0)
		return;
	for (size_t k = 0; k < 2; k++) {
		if (adapter_parse(p->net_allow[k].adapter, &rq, rq.target, buf, n, n & 1, &a,
				  &why) != 0)
			continue;
		if (!a.model[0] || a.n_tools > ADAPTER_TOOLS_MAX)
			abort();
		(void)adapter_allows(p->net_actions, &a, &why);
		adapter_action_json(&a, out, sizeof(out));
	}
	for (size_t k = 0; k < 2; k++) {
		uint64_t c = 0;

		/* The same bytes as a response of either shape. */
		if (adapter_charge(p->net_allow[k].adapter, buf, n, true, false, &c) == 0 &&
		    c > POLICY_METER_CREDITS_MAX)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[POLICY_NET_NAME_MAX + 2];
	char *copy;

#ifdef FUZZ_ONLY
	{
		/* The selector is ours: the input is the parser's (a seed
		 * of that parser keeps its own selector byte). */
		static uint8_t buf[2 * HTTP_HEAD_MAX + 1];

		if (size > 2 * HTTP_HEAD_MAX)
			return 0;
		if (size == 0 || data[0] != FUZZ_ONLY) {
			buf[0] = FUZZ_ONLY;
			memcpy(buf + 1, data, size);
			data = buf;
			size++;
		}
	}
#endif
	if (size < 1 || size > 2 * HTTP_HEAD_MAX)
		return 0;
	/* A private copy: the parsers must not read past what they were
	 * given (ASan sees it in the exact-size buffer). */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	switch (data[0]) {
	case 'h':
		http(copy, size - 1);
		break;
	case 'c':
		chunked(copy, size - 1);
		break;
	case 's':
		(void)tls_client_hello_sni((const unsigned char *)copy, size - 1, name,
					   sizeof(name));
		break;
	case 'd':
		dns((const unsigned char *)copy, size - 1);
		break;
	case 'g':
	case 'p':
		grant(copy, size - 1);
		break;
	case 'a':
		approvals(copy, size - 1);
		break;
	case 'v':
		approve(copy, size - 1);
		break;
	case 'b':
		body(copy, size - 1);
		break;
	case 'r': {
		unsigned st;

		(void)http_parse_status(copy, size - 1, &st);
		break;
	}
	case 'k':
		attempt(copy, size - 1);
		break;
	case 'K':
		secrets(copy, size - 1);
		break;
	case 'm':
		meter(copy, size - 1);
		break;
	case 'M':
		charge(copy, size - 1);
		break;
	case 'L':
		lookup(copy, size - 1);
		break;
	case 'l':
		verdict(copy, size - 1);
		break;
	case 'w':
		swap(copy, size - 1);
		break;
	case 'R':
		redact(copy, size - 1);
		break;
	case 'j':
		job_id(copy, size - 1);
		break;
	case 'J':
		job_status(copy, size - 1);
		break;
	case 'A':
		adapter(copy, size - 1);
		break;
	case 'x':
		redact_framed(copy, size - 1);
		break;
	case 'u': {
		/* A C string, as getenv() gives it. */
		char *s = strndup(copy, size - 1);
		struct sockaddr_storage sa;
		socklen_t len;

		if (s)
			(void)dns_parse_upstream(s, &sa, &len);
		free(s);
		break;
	}
	}
	free(copy);
	return 0;
}
