/* libFuzzer target for the parsers of cross-process input other than the
 * policy: the first byte picks one, the rest is its input.
 *   'o' outcome_apply(): the supervisor's reading of what the child and
 *       paddock-init send, one message per line, applied in order to one
 *       outcome (so sequences reach every state)
 *   'p' mounts_protect_decode(): the child's reading of "protect LINE"
 *   'x' session_exec_decode(): the supervisor's reading of an "exec"
 *       request from a local client
 *   'e' initproto_error_parse(): "error ERRNO MSG"
 *   'i' mounts_idmap_decode(): the child's reading of "idmap INDEX"
 *   's' subid_parse(): /etc/subuid's lines, for root and for uid 0
 *   'h' http_stamp_feed(): what a server in the sandbox sends through an
 *       HTTP forward, fed in chunks (the next byte picks their size); the
 *       first head out must carry the lease once and no other Paddock-Lease
 *   'q' http_request_host(): a client's request head
 *   'k' signer_principal_listed(), signer_key_of(): what paddock reads of
 *       ssh-keygen -Y find-principals and -Y verify (launcher/supervisor/
 *       signer.c)
 *   'j' session_peek(): paddock-exec's reading of session.json without
 *       cJSON; when the codec's session_info_parse() reads the text too,
 *       both must read the same id, owner, supervisor pid and state
 *   'n' session_parse_nsids(): the supervisor's reading of /proc/PID/status
 *       for the innermost pid and session id of an exec'd command's
 *       process (exec.c exec_sink()); what it returns is a number it read
 *   clang -fsanitize=fuzzer,address,undefined ... (make fuzz FUZZ=proto)
 * Built with replay.c instead, make unit runs tests/data/proto through it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/initproto.h"
#include "../../launcher/session/session.h"
#include "../../launcher/supervisor/http_stamp.h"
#include "../../launcher/supervisor/outcome.h"
#include "../../launcher/supervisor/signer.h"
#include "../../launcher/supervisor/subid.h"
#include "../../mounts/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_json[] =
    "{\"version\":1,\"mounts\":["
    "{\"type\":\"bind\",\"source\":\"/usr\"},"
    "{\"type\":\"proc\",\"target\":\"/proc\"},"
    "{\"type\":\"bind\",\"source\":\"${WORKSPACE}\",\"target\":\"/work\",\"mode\":\"rw\"}],"
    "\"protect\":[\"/work/.git/hooks\",\"/work/x\"],"
    "\"services\":[{\"name\":\"web\",\"argv\":[\"httpd\"],\"lease\":\"10s\"},"
    "{\"name\":\"db\",\"argv\":[\"db\"]}]}";

static struct policy *policy(void)
{
	static const struct policy_vars vars = {.workspace = "/ws", .home = "/h", .pwd = "/p"};
	static struct policy *p;
	struct err err = {0};

	if (!p && policy_load_buffer(policy_json, strlen(policy_json), &vars, &p, &err) < 0)
		abort(); /* the fixture itself is wrong */
	return p;
}

static void outcome(const char *text, size_t len)
{
	const struct timespec now = {.tv_sec = 1764570000, .tv_nsec = 123000000};
	struct outcome o = {0};
	char *copy = strndup(text, len), *line, *save = NULL;
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = 0};

	if (!copy || outcome_init(&o, policy(), 9) < 0) {
		free(copy);
		outcome_free(&o);
		return;
	}
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strlen(line) <= INITPROTO_MAX)
			(void)outcome_apply(&o, line, &now);
	}
	for (size_t i = 0; i < o.n_ops; i++)
		(void)outcome_applied_state(&o, i);
	outcome_conclude(&o, &si);
	outcome_free(&o);
	free(copy);
}

static void protect(const char *text, size_t len)
{
	struct mount_plan plan = {0};
	char *line = strndup(text, len);

	if (line && mounts_plan(policy(), 0, &plan) == 0)
		(void)mounts_protect_decode(&plan, line);
	mounts_plan_free(&plan);
	free(line);
}

static void exec_request(const char *pkt, size_t len)
{
	struct session_exec x = {.stdio = {-1, -1, -1}};
	struct err err = {0};

	if (session_exec_decode(pkt, len, &x, &err) == 0)
		session_exec_free(&x);
}

static void idmap(const char *text, size_t len)
{
	struct mount_plan plan = {0};
	char *line = strndup(text, len);
	size_t i;

	if (line && mounts_plan(policy(), 0, &plan) == 0)
		(void)mounts_idmap_decode(&plan, line, &i);
	mounts_plan_free(&plan);
	free(line);
}

static void error_message(const char *text, size_t len)
{
	struct err e = {0};
	char *m = strndup(text, len);

	if (m)
		(void)initproto_error_parse(m, &e);
	free(m);
}

static const char lease[] = "session=0123456789ab; service=web; gen=3; nonce=00ff";

static void stamp(const char *in, size_t len)
{
	static struct http_stamp st;
	static char out[HTTP_HEAD_MAX + 65536 + HTTP_STAMP_GROWTH], all[1 << 18];
	size_t chunk = len ? (unsigned char)in[0] % 64 + 1 : 1, total = 0;
	const char *end, *p;
	int ours = 0;

	memset(&st, 0, sizeof(st));
	st.lease = lease;
	for (size_t off = len ? 1 : 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		ssize_t k = http_stamp_feed(&st, in + off, n, out, sizeof(out));

		if (k < 0)
			return;
		if ((size_t)k > HTTP_HEAD_MAX + n + HTTP_STAMP_GROWTH)
			abort(); /* more than the relay's buffer holds */
		if (total + (size_t)k < sizeof(all)) {
			memcpy(all + total, out, (size_t)k);
			total += (size_t)k;
		}
	}
	all[total] = '\0';
	end = strstr(all, "\r\n\r\n");
	if (!end || memchr(all, '\0', total))
		return;
	for (p = all; (p = strcasestr(p, "\npaddock-lease:")) && p < end; p++) {
		if (strncmp(p + 1, "Paddock-Lease: ", 15) != 0 ||
		    strncmp(p + 16, lease, strlen(lease)) != 0)
			abort(); /* the server's own got through */
		ours++;
	}
	if (ours != 1)
		abort();
}

static void request_host(const char *in, size_t len)
{
	char host[64];

	if (http_request_host(in, len, host, sizeof(host)) == 1) {
		for (const char *p = host; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				abort();
		(void)http_host_allowed(host, "g1.0123456789ab.paddock.test");
	}
}

/* A principal is a whole line: one listed is in the text as a line. */
static void keygen_output(const char *in, size_t len)
{
	static char text[SESSION_EXEC_MAX + 1];
	char key[160];
	size_t n;

	memcpy(text, in, len);
	text[len] = '\0';
	signer_key_of(text, key, sizeof(key));
	n = strlen(key);
	if (n >= sizeof(key) || memchr(key, '\n', n))
		abort(); /* a key is the rest of one line, cut to fit */
	if (signer_principal_listed(text, "d@example.test") &&
	    strncmp(text, "d@example.test", 14) != 0 && !strstr(text, "\nd@example.test"))
		abort();
}

/* Where both read a text, session_peek() reads what the codec reads:
 * paddock-exec and paddock exec see the same session. */
static void peek(const char *text, size_t len)
{
	static char copy[SESSION_JSON_MAX + 1];
	struct session_info info;
	struct session_peek pk;
	struct err err = {0};

	/* paddock-exec reads at most SESSION_JSON_MAX bytes. */
	if (len > SESSION_JSON_MAX || session_peek(text, len, &pk) != 0)
		return;
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (session_info_parse(copy, len, &info, &err) != 0)
		return;
	if (strcmp(pk.id, info.id) != 0 || pk.owner != info.owner ||
	    pk.supervisor_pid != info.supervisor.pid ||
	    strcmp(pk.state, session_state_name(info.state)) != 0)
		abort(); /* the two readers disagree */
}

static void nsids(const char *text, size_t len)
{
	static char copy[SESSION_EXEC_MAX + 1];
	pid_t pid = -1, sid = -1;

	memcpy(copy, text, len);
	copy[len] = '\0';
	if (session_parse_nsids(copy, &pid, &sid) == 0 && (pid < 0 || sid < 0))
		abort(); /* a value it promised never to return */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *rest;

#ifdef FUZZ_ONLY
	{
		/* make fuzz FUZZ=proto FUZZ_ONLY=h: every input goes to that
		 * one parser (a seed of it keeps its own selector byte). */
		static uint8_t buf[SESSION_EXEC_MAX + 1];

		if (size > SESSION_EXEC_MAX)
			return 0;
		if (size == 0 || data[0] != FUZZ_ONLY) {
			buf[0] = FUZZ_ONLY;
			memcpy(buf + 1, data, size);
			data = buf;
			size++;
		}
	}
#endif
	rest = (const char *)data + 1;
	if (size < 1 || size > SESSION_EXEC_MAX + 1)
		return 0;
	switch (data[0]) {
	case 'o':
		outcome(rest, size - 1);
		break;
	case 'p':
		protect(rest, size - 1);
		break;
	case 'x':
		exec_request(rest, size - 1);
		break;
	case 'e':
		error_message(rest, size - 1);
		break;
	case 'i':
		idmap(rest, size - 1);
		break;
	case 'h':
		stamp(rest, size - 1);
		break;
	case 'q':
		request_host(rest, size - 1);
		break;
	case 'k':
		keygen_output(rest, size - 1);
		break;
	case 'j':
		peek(rest, size - 1);
		break;
	case 'n':
		nsids(rest, size - 1);
		break;
	case 's': {
		uint32_t start, count;

		if (subid_parse(rest, size - 1, "root", 0, &start, &count) == 0 &&
		    (count == 0 || (uint64_t)start + count > 0xffffffffull))
			abort(); /* a range it promised never to return */
		break;
	}
	}
	return 0;
}
