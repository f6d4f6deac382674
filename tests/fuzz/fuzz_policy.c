/* libFuzzer target for the policy parser and amend step, the --env-file
 * parser, "extends" and the per-user defaults file (every input goes
 * through all four; a base named "self" is the input again):
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I/usr/include/cjson \
 *         tests/fuzz/fuzz_policy.c policy/\*.c -lcjson -o build/fuzz_policy
 *   build/fuzz_policy tests/data/valid tests/data/invalid contrib/policies
 * Built without -fsanitize=fuzzer (and with -DREPLAY), replay.c's main()
 * runs every corpus file through it: make fuzz-replay, part of make unit. */
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../../policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *lookup(const char *name)
{
	return name[0] == 'A' ? "from-env" : NULL;
}

static const char *fuzz_text;
static size_t fuzz_len;

static int fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		 char *label, size_t size, struct err *err)
{
	static const char base[] = "{\"version\":1,\"mounts\":[{\"type\":\"proc\",\"target\":"
				   "\"/proc\"}],\"environment\":{\"set\":{\"A\":\"1\"}}}";
	const char *t = strcmp(name, "self") == 0 ? fuzz_text : base;
	size_t n = strcmp(name, "self") == 0 ? fuzz_len : sizeof(base) - 1;

	(void)arg;
	(void)from;
	*text = malloc(n + 1);
	if (!*text)
		return err_set(err, ENOMEM, "out of memory");
	memcpy(*text, t, n);
	(*text)[n] = '\0';
	*len = n;
	snprintf(label, size, "%s", name);
	return 0;
}

static void extends(const char *text, size_t len)
{
	static const struct policy_vars vars = {.workspace = "/ws", .home = "/h", .pwd = "/p"};
	struct policy *p = NULL;
	struct err err = {0};
	char *out = NULL;
	size_t n = 0;

	fuzz_text = text;
	fuzz_len = len;
	if (policy_extends_resolve(text, len, "fuzz", fetch, NULL, &out, &n, &err) == 0) {
		if (policy_load_buffer(out, n, &vars, &p, &err) == 0)
			policy_free(p);
		free(out);
	}
}

static void env_file(const char *text, size_t len)
{
	const char *why = NULL;
	char **out = NULL;
	size_t n = 0, line = 0;
	int rc = policy_env_file_parse(text, len, lookup, &out, &n, &line, &why);

	if (rc == -EINVAL && (!why || line == 0))
		abort(); /* a refusal says where and why */
	for (size_t i = 0; i < n; i++) {
		if (!strchr(out[i], '='))
			abort();
		free(out[i]);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct policy_vars vars = {.workspace = "/ws", .home = "/h", .pwd = "/p"};
	static const struct policy_bind_arg binds[] = {{"/a:/b", false}, {"/c", true}};
	static const char *const env[] = {"K=V"};
	struct policy_additions add = {.binds = binds, .n_binds = 2, .setenv = env, .n_setenv = 1};
	struct policy *p = NULL;
	struct err err = {0};
	char *out = NULL;
	size_t len = 0;

	if (size > POLICY_MAX_BYTES + 16)
		return 0;
	env_file((const char *)data, size);
	extends((const char *)data, size);
	{
		struct policy_user_config c;
		struct err e = {0};

		if (policy_user_config_parse((const char *)data, size, &c, &e) == 0)
			policy_user_config_free(&c);
	}
	if (policy_load_buffer((const char *)data, size, &vars, &p, &err) == 0)
		policy_free(p);
	if (policy_amend((const char *)data, size, &add, &out, &len, &err) == 0) {
		p = NULL;
		if (policy_load_buffer(out, len, &vars, &p, &err) == 0)
			policy_free(p);
		free(out);
	}
	return 0;
}
