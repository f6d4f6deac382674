/* HB-07: a headless Chromium driven over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: JSON messages ended by NUL, Chromium reads fd 3
 * and writes fd 4), cJSON only: no WebSocket, no debugging port another
 * user could connect to, no Node. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "hb07_grade.h"

struct cdp {
	pid_t pid;
	int to, from; /* our ends: we write to, read from */
	int next_id;
	char session[128]; /* the page target's flat session id */
	char *buf;	   /* what was read and not yet taken */
	size_t len, cap;
	char why[256];
	struct hb07_nav *nav; /* the navigation under way: its Document response */
	bool load_fired;
};

/* Start chromium (bin) headless with a fresh profile dir, the given
 * --host-resolver-rules and --unsafely-treat-insecure-origin-as-secure
 * (NULL: none), as uid/gid (dropped to when not ours), attached to one page with the
 * Network, Page and Runtime domains on. 0, or -1 with c->why. */
int cdp_start(struct cdp *c, const char *bin, const char *profile, const char *rules,
	      const char *secure, uid_t uid, gid_t gid);
/* Navigate to url and fill n (loaded, status, remote, lease, the cache
 * flags, marker); with png, a screenshot there (n->shot). 0, or -1 with
 * c->why when the browser did not answer. */
int cdp_visit(struct cdp *c, const char *url, const char *png, struct hb07_nav *n);
/* Wait until the page's service worker is active (at most ms): true then. */
bool cdp_sw_ready(struct cdp *c, int ms);
/* Close the browser (Browser.close, then SIGKILL by pid after 3 s). */
void cdp_stop(struct cdp *c);
