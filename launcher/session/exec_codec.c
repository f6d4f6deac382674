/* The "exec" request of the control socket, both ways (the encoding is
 * described with the other requests at the top of server.c). Pure
 * code but for the close() of the received fds: unit-tested, and the
 * supervisor trusts nothing in a packet that this did not check. */
#include "session.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../policy/policy.h"

#define TAG_LEN 4 /* "cwd=", "env=", "arg=" */

void session_exec_free(struct session_exec *x)
{
	if (!x->buf)
		return;
	for (int i = 0; i < 3; i++)
		if (x->stdio[i] >= 0)
			close(x->stdio[i]);
	free(x->buf);
	free(x->env);
	free(x->argv);
	memset(x, 0, sizeof(*x));
}

static char *put(char *p, const char *tag, const char *value)
{
	size_t n = strlen(value) + 1;

	memcpy(p, tag, TAG_LEN);
	memcpy(p + TAG_LEN, value, n);
	return p + TAG_LEN + n;
}

int session_exec_encode(const char *cwd, const char *const *env, size_t n_env, char *const *argv,
			bool tty, char **out, size_t *len, struct err *err)
{
	size_t total = sizeof("exec") + (tty ? TAG_LEN + 2 : 0);
	char *buf, *p;

	if (!argv || !argv[0])
		return err_set(err, EINVAL, "no command given");
	if (cwd)
		total += TAG_LEN + strlen(cwd) + 1;
	for (size_t i = 0; i < n_env; i++)
		total += TAG_LEN + strlen(env[i]) + 1;
	for (size_t i = 0; argv[i]; i++) {
		total += TAG_LEN + strlen(argv[i]) + 1;
		if (total > SESSION_EXEC_MAX)
			break;
	}
	if (total > SESSION_EXEC_MAX)
		return err_set(err, E2BIG,
			       "argument list too long (an exec request holds at most %u bytes)",
			       SESSION_EXEC_MAX);
	buf = malloc(total);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	memcpy(buf, "exec", sizeof("exec"));
	p = buf + sizeof("exec");
	if (cwd)
		p = put(p, "cwd=", cwd);
	if (tty)
		p = put(p, "tty=", "1");
	for (size_t i = 0; i < n_env; i++)
		p = put(p, "env=", env[i]);
	for (size_t i = 0; argv[i]; i++)
		p = put(p, "arg=", argv[i]);
	*out = buf;
	*len = total;
	return 0;
}

/* One field: its kind ('c', 'e', 'a'), or -EINVAL with err set. */
static int field(const char *f, size_t index, struct err *err)
{
	const char *v = f + TAG_LEN, *eq;

	if (strncmp(f, "cwd=", TAG_LEN) == 0) {
		if (v[0] != '/')
			return err_set(err, EINVAL, "exec request: cwd %s is not absolute", v);
		return 'c';
	}
	if (strncmp(f, "env=", TAG_LEN) == 0) {
		eq = strchr(v, '=');
		if (!eq || !policy_env_name_ok(v, (size_t)(eq - v)))
			return err_set(err, EINVAL, "exec request: env %.64s is not NAME=VALUE", v);
		return 'e';
	}
	if (strncmp(f, "arg=", TAG_LEN) == 0)
		return 'a';
	if (strncmp(f, "tty=", TAG_LEN) == 0) {
		if (strcmp(v, "1") != 0)
			return err_set(err, EINVAL, "exec request: tty=%.8s is not 1", v);
		return 't';
	}
	return err_set(err, EINVAL, "exec request: unknown field %zu", index);
}

int session_exec_decode(const char *pkt, size_t len, struct session_exec *out, struct err *err)
{
	struct session_exec x = {.stdio = {-1, -1, -1}};
	const size_t head = sizeof("exec");
	size_t n_cwd = 0, n_tty = 0, i;
	char *p;
	int kind;

	memset(out, 0, sizeof(*out));
	if (len > SESSION_EXEC_MAX)
		return err_set(err, E2BIG, "argument list too long");
	if (len < head || memcmp(pkt, "exec", head) != 0)
		return err_set(err, EINVAL, "not an exec request");
	/* Every field ends with a NUL, so the packet does; strlen() below
	 * then never reads past it. */
	if (pkt[len - 1] != '\0')
		return err_set(err, EINVAL, "exec request: the last field is not NUL-terminated");
	for (p = (char *)pkt + head, i = 0; p < pkt + len; p += strlen(p) + 1, i++) {
		kind = field(p, i, err);
		if (kind < 0)
			return kind;
		n_cwd += kind == 'c';
		n_tty += kind == 't';
		x.n_env += kind == 'e';
		x.argc += kind == 'a';
	}
	if (n_cwd > 1)
		return err_set(err, EINVAL, "exec request: more than one cwd");
	if (n_tty > 1)
		return err_set(err, EINVAL, "exec request: more than one tty");
	x.tty = n_tty == 1;
	x.buf = malloc(len);
	x.env = calloc(x.n_env + 1, sizeof(*x.env));
	x.argv = calloc(x.argc + 1, sizeof(*x.argv));
	if (!x.buf || !x.env || !x.argv) {
		free(x.buf);
		free(x.env);
		free(x.argv);
		return err_set(err, ENOMEM, "out of memory");
	}
	memcpy(x.buf, pkt, len);
	x.n_env = x.argc = 0;
	for (p = x.buf + head; p < x.buf + len; p += strlen(p) + 1) {
		if (p[0] == 'c')
			x.cwd = p + TAG_LEN;
		else if (p[0] == 'e')
			x.env[x.n_env++] = p + TAG_LEN;
		else if (p[0] == 'a')
			x.argv[x.argc++] = p + TAG_LEN;
	}
	if (x.argc == 0 || x.argv[0][0] == '\0') {
		session_exec_free(&x);
		return err_set(err, EINVAL, "exec request: no command");
	}
	*out = x;
	return 0;
}
