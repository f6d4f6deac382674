/* Argument vectors for the arms (harness.h): pure, no syscalls, so
 * tests/unit/test_eval.c pins the bound. */
#include "harness.h"

#include "../observers/selftest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void argv_start(struct argv_buf *a, struct result *r)
{
	a->n = 0;
	a->v[0] = NULL;
	a->err = 0;
	a->r = r;
	a->used = 0;
}

static int refuse(struct argv_buf *a, const char *s)
{
	char why[320];

	if (!a->err && a->r) {
		snprintf(why, sizeof(why),
			 "harness defect: argv longer than %d words (at \"%.40s\"): not run",
			 ARGV_MAX, s);
		result_not_run(a->r, why);
	}
	a->err = -E2BIG;
	return -E2BIG;
}

int argv_add(struct argv_buf *a, const char *s)
{
	if (a->err)
		return a->err;
	if (a->n >= ARGV_MAX)
		return refuse(a, s);
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
	return 0;
}

int argv_words(struct argv_buf *a, ...)
{
	const char *w;
	va_list ap;
	int rc = 0;

	va_start(ap, a);
	while ((w = va_arg(ap, const char *)) && rc == 0)
		rc = argv_add(a, w);
	va_end(ap);
	return rc;
}

int argv_addf(struct argv_buf *a, const char *fmt, ...)
{
	size_t room = sizeof(a->store) - a->used;
	char *w = a->store + a->used;
	va_list ap;
	int k;

	if (a->err)
		return a->err;
	va_start(ap, fmt);
	k = vsnprintf(w, room, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= room)
		return refuse(a, fmt);
	a->used += (size_t)k + 1;
	return argv_add(a, w);
}

/* The one place of the harness rule: containers get --network none, never
 * a bridge network. */
/* Never a bridge network: none, or the host's for the arm that asks
 * for it by name (docker:host-net, whose clients use loopback only). */
static void docker_start(struct argv_buf *a, struct result *r, const char *mode)
{
	argv_start(a, r);
	argv_add(a, "docker");
	argv_add(a, "run");
	argv_add(a, mode);
	argv_add(a, "--network");
	argv_add(a, r && strcmp(r->arm, "docker:host-net") == 0 ? "host" : "none");
	/* oci:docker-runtime-paddock: the same run, paddock oci its runtime;
	 * oci-weakened:KNOB: the engine's runtime paddock-weaken-KNOB, which
	 * is paddock oci with the global --weaken KNOB (contrib/docker/
	 * engine.sh; a runtime's arguments are how Docker 20.10, without
	 * --annotation, can give it), in the record's weakenings. */
	if (r && r->oci) {
		argv_add(a, "--runtime");
		if (r->kind == ARM_WEAKENED)
			argv_addf(a, "paddock-weaken-%s", r->knob);
		else
			argv_add(a, "paddock");
	}
}

void argv_docker_run(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
		     const struct docker_bind *binds, const char *workdir)
{
	docker_start(a, r, "--rm");
	for (const struct docker_bind *b = binds; b && b->dir; b++) {
		argv_add(a, "-v");
		argv_addf(a, "%s:%s%s", b->dir, b->dir, b->ro ? ":ro" : "");
	}
	if (workdir) {
		argv_add(a, "-w");
		argv_add(a, workdir);
	}
	argv_add(a, ctx->docker_image);
}

static void option(struct argv_buf *a, const char *name, const char *value)
{
	if (!value || !value[0])
		return;
	argv_add(a, name);
	argv_add(a, value);
}

void argv_paddock_run(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
		      const char *policy, const char *knob, const char *ws, const char *record)
{
	argv_start(a, r);
	argv_add(a, ctx->paddock);
	argv_add(a, "run");
	option(a, "--policy", policy);
	option(a, "--workspace", ws);
	option(a, "--record", record);
	/* "no-pidns+no-sweep": one --weaken per knob. Test-only
	 * (knob-dropped, make eval-selftest): the harness believes in a
	 * weakening it never passed; the record read back must notice. */
	for (const char *k = selftest_on("knob-dropped") ? NULL : knob; k && *k;) {
		size_t n = strcspn(k, "+");

		argv_add(a, "--weaken");
		argv_addf(a, "%.*s", (int)n, k);
		k += n + (k[n] == '+');
	}
}

void argv_docker_detached(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
			  const char *name)
{
	docker_start(a, r, "-d");
	argv_add(a, "--init");
	argv_add(a, "--name");
	argv_add(a, name);
	argv_add(a, ctx->docker_image);
}
