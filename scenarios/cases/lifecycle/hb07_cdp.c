/* HB-07's DevTools driver (hb07_cdp.h). */
#include "hb07_cdp.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int send_msg(struct cdp *c, const char *method, cJSON *params, bool page)
{
	cJSON *o = cJSON_CreateObject();
	char *text;
	size_t len, off = 0;
	int id = ++c->next_id;

	cJSON_AddNumberToObject(o, "id", id);
	cJSON_AddStringToObject(o, "method", method);
	if (page && c->session[0])
		cJSON_AddStringToObject(o, "sessionId", c->session);
	cJSON_AddItemToObject(o, "params", params ? params : cJSON_CreateObject());
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -1;
	len = strlen(text) + 1; /* with its NUL: the message's end */
	while (off < len) {
		ssize_t n = write(c->to, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(text);
			snprintf(c->why, sizeof(c->why), "chromium's pipe: %s", strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	free(text);
	return id;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static void copy(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s);
}

/* The Document response of the navigation under way. */
static void on_event(struct cdp *c, const cJSON *m)
{
	const char *method = str(m, "method");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "params"), *resp, *h, *it;

	if (strcmp(method, "Page.loadEventFired") == 0) {
		c->load_fired = true;
		return;
	}
	if (strcmp(method, "Network.responseReceived") != 0 || !c->nav || c->nav->loaded ||
	    strcmp(str(p, "type"), "Document") != 0)
		return;
	resp = cJSON_GetObjectItemCaseSensitive(p, "response");
	c->nav->loaded = true;
	it = cJSON_GetObjectItemCaseSensitive(resp, "status");
	c->nav->status = cJSON_IsNumber(it) ? (int)it->valuedouble : 0;
	copy(c->nav->remote, sizeof(c->nav->remote), str(resp, "remoteIPAddress"));
	it = cJSON_GetObjectItemCaseSensitive(resp, "remotePort");
	c->nav->remote_port = cJSON_IsNumber(it) ? (int)it->valuedouble : 0;
	c->nav->from_disk_cache =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "fromDiskCache"));
	c->nav->from_service_worker =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "fromServiceWorker"));
	h = cJSON_GetObjectItemCaseSensitive(resp, "headers");
	cJSON_ArrayForEach(it, h)
		if (it->string && strcasecmp(it->string, "paddock-lease") == 0 &&
		    cJSON_IsString(it))
			copy(c->nav->lease, sizeof(c->nav->lease), it->valuestring);
}

/* More bytes from chromium: 0, or -1 at EOF or an error. */
static int read_more(struct cdp *c)
{
	ssize_t n;

	if (c->cap - c->len < 65536) {
		char *b = realloc(c->buf, c->cap + (1u << 20));

		if (!b)
			return -1;
		c->buf = b;
		c->cap += 1u << 20;
	}
	n = read(c->from, c->buf + c->len, c->cap - c->len - 1);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0) {
		snprintf(c->why, sizeof(c->why), "chromium closed its pipe");
		return -1;
	}
	c->len += (size_t)n;
	return 0;
}

/* Read messages until the reply to id (handed back in *out, the caller
 * deletes it) or until deadline; events are handled on the way. */
static int wait_for(struct cdp *c, int id, long deadline, cJSON **out)
{
	for (;;) {
		char *nul = c->len ? memchr(c->buf, '\0', c->len) : NULL;

		if (nul) {
			size_t n = (size_t)(nul - c->buf) + 1;
			cJSON *m = cJSON_Parse(c->buf);
			const cJSON *mid;

			memmove(c->buf, c->buf + n, c->len - n);
			c->len -= n;
			if (!m)
				continue;
			mid = cJSON_GetObjectItemCaseSensitive(m, "id");
			if (id > 0 && cJSON_IsNumber(mid) && (int)mid->valuedouble == id) {
				if (out)
					*out = m;
				else
					cJSON_Delete(m);
				return 0;
			}
			on_event(c, m);
			cJSON_Delete(m);
			if (id == 0 && c->load_fired)
				return 0;
			continue;
		}
		long left = deadline - now_ms();
		struct pollfd pfd = {.fd = c->from, .events = POLLIN};

		if (left <= 0) {
			snprintf(c->why, sizeof(c->why), "chromium did not answer in time");
			return -1;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		if (read_more(c) < 0)
			return -1;
	}
}

/* One command and its reply's "result" (the caller deletes *out, the
 * whole message), within ms. */
static int call(struct cdp *c, const char *method, cJSON *params, bool page, int ms, cJSON **out)
{
	cJSON *m = NULL;
	int id = send_msg(c, method, params, page);

	if (id < 0 || wait_for(c, id, now_ms() + ms, &m) < 0)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(m, "error")) {
		snprintf(c->why, sizeof(c->why), "%s: %s", method,
			 str(cJSON_GetObjectItemCaseSensitive(m, "error"), "message"));
		cJSON_Delete(m);
		return -1;
	}
	if (out)
		*out = m;
	else
		cJSON_Delete(m);
	return 0;
}

static const cJSON *result_of(const cJSON *m)
{
	return cJSON_GetObjectItemCaseSensitive(m, "result");
}

int cdp_start(struct cdp *c, const char *bin, const char *profile, const char *rules,
	      const char *secure, uid_t uid, gid_t gid)
{
	char a_profile[600], a_rules[600], a_secure[600];
	const char *argv[32];
	int to[2], from[2], nul, n = 0;
	cJSON *m = NULL, *p;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	snprintf(a_profile, sizeof(a_profile), "--user-data-dir=%s", profile);
	snprintf(a_rules, sizeof(a_rules), "--host-resolver-rules=%s", rules);
	snprintf(a_secure, sizeof(a_secure), "--unsafely-treat-insecure-origin-as-secure=%s",
		 secure ? secure : "");
	argv[n++] = bin;
	argv[n++] = "--headless";
	argv[n++] = "--remote-debugging-pipe";
	argv[n++] = a_profile;
	argv[n++] = a_rules;
	if (secure)
		argv[n++] = a_secure;
	/* Nothing of its own on the network: no updates, no sync, no
	 * safe-browsing lists, no name outside .paddock.test resolves. */
	argv[n++] = "--disable-background-networking";
	argv[n++] = "--disable-component-update";
	argv[n++] = "--disable-sync";
	argv[n++] = "--disable-extensions";
	argv[n++] = "--disable-default-apps";
	argv[n++] = "--no-first-run";
	argv[n++] = "--no-default-browser-check";
	argv[n++] = "--disable-gpu";
	argv[n++] = "--window-size=800,500";
	/* Only as root (no workload user to drop to) does Chromium need
	 * --no-sandbox: it refuses to start as root with its sandbox. As
	 * the workload user it keeps it. */
	if (uid == 0)
		argv[n++] = "--no-sandbox";
	argv[n++] = "about:blank";
	argv[n] = NULL;
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0) {
		snprintf(c->why, sizeof(c->why), "pipe: %s", strerror(errno));
		return -1;
	}
	c->pid = fork();
	if (c->pid == 0) {
		int r3 = fcntl(to[0], F_DUPFD, 10), w4 = fcntl(from[1], F_DUPFD, 10);

		nul = open("/dev/null", O_RDWR);
		if (r3 < 0 || w4 < 0 || nul < 0 || dup2(r3, 3) < 0 || dup2(w4, 4) < 0 ||
		    dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
			_exit(127);
		/* A process group of its own: its zygote and renderers
		 * are ended with it (cdp_stop). */
		(void)setpgid(0, 0);
		if (uid != getuid() &&
		    (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
			_exit(126);
		setenv("HOME", profile, 1);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->to = to[1];
	c->from = from[0];
	if (c->pid < 0) {
		snprintf(c->why, sizeof(c->why), "fork: %s", strerror(errno));
		return -1;
	}
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "url", "about:blank");
	if (call(c, "Target.createTarget", p, false, 30000, &m) < 0)
		return -1;
	copy(a_rules, sizeof(a_rules), str(result_of(m), "targetId"));
	cJSON_Delete(m);
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "targetId", a_rules);
	cJSON_AddTrueToObject(p, "flatten");
	if (call(c, "Target.attachToTarget", p, false, 10000, &m) < 0)
		return -1;
	copy(c->session, sizeof(c->session), str(result_of(m), "sessionId"));
	cJSON_Delete(m);
	if (!c->session[0]) {
		snprintf(c->why, sizeof(c->why), "no page session");
		return -1;
	}
	if (call(c, "Network.enable", NULL, true, 10000, NULL) < 0 ||
	    call(c, "Page.enable", NULL, true, 10000, NULL) < 0 ||
	    call(c, "Runtime.enable", NULL, true, 10000, NULL) < 0)
		return -1;
	return 0;
}

static int b64val(int ch)
{
	const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = ch ? strchr(t, ch) : NULL;

	return p ? (int)(p - t) : -1;
}

/* Decode base64 s into path (0600). */
static bool write_b64(const char *s, const char *path)
{
	size_t n = strlen(s), k = 0;
	unsigned char *out = malloc(n / 4 * 3 + 3);
	unsigned acc = 0;
	int bits = 0, fd;
	bool ok;

	if (!out)
		return false;
	for (size_t i = 0; i < n; i++) {
		int v = b64val(s[i]);

		if (v < 0)
			continue; /* '=' and anything else */
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	ok = fd >= 0 && k > 8 && write(fd, out, k) == (ssize_t)k && memcmp(out, "\x89PNG", 4) == 0;
	if (fd >= 0)
		close(fd);
	free(out);
	return ok;
}

static int eval_string(struct cdp *c, const char *expr, bool await, int ms, char *buf, size_t size)
{
	cJSON *p = cJSON_CreateObject(), *m = NULL;
	const cJSON *r;

	cJSON_AddStringToObject(p, "expression", expr);
	cJSON_AddTrueToObject(p, "returnByValue");
	if (await)
		cJSON_AddTrueToObject(p, "awaitPromise");
	if (call(c, "Runtime.evaluate", p, true, ms, &m) < 0)
		return -1;
	r = cJSON_GetObjectItemCaseSensitive(result_of(m), "result");
	copy(buf, size, str(r, "value"));
	cJSON_Delete(m);
	return 0;
}

int cdp_visit(struct cdp *c, const char *url, const char *png, struct hb07_nav *n)
{
	cJSON *p = cJSON_CreateObject(), *m = NULL;
	bool failed;

	c->nav = n;
	c->load_fired = false;
	cJSON_AddStringToObject(p, "url", url);
	if (call(c, "Page.navigate", p, true, 15000, &m) < 0) {
		c->nav = NULL;
		return -1;
	}
	failed = str(result_of(m), "errorText")[0] != '\0';
	cJSON_Delete(m);
	/* The load event (an error page has one too); not fatal when late. */
	if (!c->load_fired)
		(void)wait_for(c, 0, now_ms() + (failed ? 3000 : 15000), NULL);
	c->nav = NULL;
	if (eval_string(c, "(document.getElementById('marker')||{}).textContent||''", false, 5000,
			n->marker, sizeof(n->marker)) < 0)
		return -1;
	if (png) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "format", "png");
		if (call(c, "Page.captureScreenshot", p, true, 15000, &m) < 0)
			return -1;
		n->shot = write_b64(str(result_of(m), "data"), png);
		cJSON_Delete(m);
	}
	return 0;
}

bool cdp_sw_ready(struct cdp *c, int ms)
{
	char v[32] = "";

	if (eval_string(c,
			"navigator.serviceWorker ? Promise.race([navigator.serviceWorker.ready"
			".then(()=>'ready'), new Promise(r=>setTimeout(()=>r('late'),4000))])"
			" : 'none'",
			true, ms, v, sizeof(v)) < 0)
		return false;
	return strcmp(v, "ready") == 0;
}

void cdp_stop(struct cdp *c)
{
	if (c->pid > 0) {
		long deadline = now_ms() + 3000;
		siginfo_t si = {0};

		(void)send_msg(c, "Browser.close", NULL, false);
		/* Seen ended but not reaped (WNOWAIT): its pid, and so its
		 * process group's id, cannot be anybody else's yet. */
		while (now_ms() < deadline &&
		       waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		       si.si_pid == 0)
			usleep(50 * 1000);
		/* Its zygote and renderers, and itself if it did not close. */
		kill(-c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = -1;
	if (c->to > 0)
		close(c->to);
	if (c->from > 0)
		close(c->from);
	c->to = c->from = -1;
	free(c->buf);
	c->buf = NULL;
}
