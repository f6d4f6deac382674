/* --trace-denials (docs/usage.md, "Denials explained"): the seccomp
 * filter's default action, under this flag, is a user notification; the
 * supervisor answers every one at once with the errno the policy gives
 * (never "continue", so there is nothing to race: the call is refused as
 * it would have been) and says what was refused: one line on stderr per
 * call, at most DENIAL_LINES of them, and per system call a count in the
 * record. Only refused calls pay for it. */
#include "run.h"

#include <cjson/cJSON.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "../../include/log.h"

#define DENIAL_LINES 50

/* Linux 6.6; Debian 12's headers are older. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

void denials_listener_sync(int fd)
{
	/* A notification wakes the supervisor on the calling process's CPU,
	 * and the answer wakes the caller on ours: the caller waits anyway,
	 * so each round trip is two switches on one CPU instead of two
	 * wake-ups across CPUs (an inter-processor interrupt each, slow on a
	 * virtual machine: bench/profile.md, "Sixth round"). An older kernel
	 * (EINVAL, ENOTTY) keeps the ordinary wake-ups; nothing else
	 * changes. */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		log_debug("seccomp listener: no synchronous wake-ups (%s)", strerror(errno));
}

int denials_prepare(struct run_spec *r, struct err *err)
{
	struct sandbox_spec *sb = &r->sb;
	int rc;

	if (!r->opt->trace_denials)
		return 0;
	if (!sb->seccomp.enabled)
		return err_set(err, EINVAL, "--trace-denials: no seccomp filter to trace (%s)",
			       r->opt->weaken & WEAKEN_NO_SECCOMP ? "--weaken no-seccomp"
								  : "seccomp profile none");
	if (r->policy->seccomp_default_action != POLICY_SECCOMP_ERRNO)
		return err_set(err, EINVAL,
			       "--trace-denials: the policy's seccomp.default_action must be errno "
			       "(kill and log are their own report)");
	rc = seccomp_notify_program(&sb->seccomp, r->policy->seccomp_errno);
	if (rc < 0)
		return err_sys(err, rc, "--trace-denials: the seccomp program");
	return 0;
}

static struct denial_count *slot(struct denials *d, int nr)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->c[i].nr == nr)
			return &d->c[i];
	if (d->n == DENIALS_MAX)
		return NULL;
	d->c[d->n] = (struct denial_count){.nr = nr};
	return &d->c[d->n++];
}

void denials_say(const struct denials_sink *sink, const char *fmt, ...)
{
	char line[1024] = "say ";
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (sink->chan < 0) {
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		return;
	}
	n = vsnprintf(line + 4, sizeof(line) - 4, fmt, ap);
	va_end(ap);
	/* Never waits: a spare that does not read loses the line (its
	 * command's call is answered all the same). */
	if (n > 0)
		(void)!send(sink->chan, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* One notification and one answer, as big as the kernel says (its sizes
 * are fixed for the supervisor's life), asked for once and reused, zeroed
 * for each call (SECCOMP_IOCTL_NOTIF_RECV wants a zeroed one): under
 * protect_git "allowlist" every file the sandbox creates or removes comes
 * here. The supervisor serves one notification at a time. */
static bool notif_buffers(struct seccomp_notif **req, struct seccomp_notif_resp **resp)
{
	static struct seccomp_notif_sizes sizes;
	static void *q, *a;

	if (!q) {
		if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
			return false;
		q = calloc(1, sizes.seccomp_notif);
		a = calloc(1, sizes.seccomp_notif_resp);
		if (!q || !a) {
			free(q);
			free(a);
			q = a = NULL;
			return false;
		}
	}
	memset(q, 0, sizes.seccomp_notif);
	memset(a, 0, sizes.seccomp_notif_resp);
	*req = q;
	*resp = a;
	return true;
}

bool denials_serve(struct run *r, int fd, struct denials_sink *sink)
{
	struct denials *d = &r->live.denials;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	bool ok = true, sent = false;

	if (fd < 0 || !notif_buffers(&req, &resp))
		return true;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the caller died first; anything else ends it. */
		ok = errno == ENOENT || errno == EINTR;
		goto out;
	}
	/* An exec listener: the lines go to the caller's command's client. */
	if (!sink)
		sink = exec_sink(r, (pid_t)req->pid);
	/* A call of the protected-path notice (notice.c), or a denial. */
	if (notice_serve(r, fd, sink, req, resp, &sent)) {
		if (!sent)
			(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
		goto out;
	}
	resp->id = req->id;
	/* Without --trace-denials only the notice's calls notify; anything
	 * else would be a bug, and is refused. */
	resp->error = r->spec->opt->trace_denials ? -r->spec->sb.seccomp.notify_errno : -ENOSYS;
	resp->val = 0;
	resp->flags = 0;
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
	if (r->spec->opt->trace_denials) {
		struct denial_count *c = slot(d, req->data.nr);
		char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);

		if (c) {
			if (!c->count++)
				c->first_pid = (pid_t)req->pid;
		} else {
			d->other++;
		}
		if (sink->lines < DENIAL_LINES)
			denials_say(sink,
				    "paddock: denied: %s by pid %u (seccomp: not allowed by the "
				    "policy; %s returned)\n",
				    name ? name : "?", (unsigned)req->pid,
				    strerror(r->spec->sb.seccomp.notify_errno));
		else
			d->suppressed++;
		sink->lines++;
		free(name);
	}
out:
	return ok;
}

void denials_json(const struct run *r, cJSON *o)
{
	const struct denials *d = &r->live.denials;
	cJSON *x = cJSON_AddObjectToObject(o, "denials"), *a;

	if (!x)
		return;
	cJSON_AddBoolToObject(x, "traced", r->spec->opt->trace_denials);
	if (!r->spec->opt->trace_denials)
		return;
	cJSON_AddStringToObject(x, "program_sha256", r->spec->sb.seccomp.bpf_notify_sha256);
	a = cJSON_AddArrayToObject(x, "seccomp");
	for (size_t i = 0; a && i < d->n; i++) {
		cJSON *e = cJSON_CreateObject();
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, d->c[i].nr);

		cJSON_AddStringToObject(e, "syscall", name ? name : "?");
		cJSON_AddNumberToObject(e, "nr", d->c[i].nr);
		cJSON_AddNumberToObject(e, "count", (double)d->c[i].count);
		cJSON_AddNumberToObject(e, "first_pid", d->c[i].first_pid);
		cJSON_AddItemToArray(a, e);
		free(name);
	}
	cJSON_AddNumberToObject(x, "other_calls", (double)d->other);
	cJSON_AddNumberToObject(x, "lines_suppressed", (double)d->suppressed);
}
