/* The session registry: where it is, what an entry holds, and how the
 * commands read it. The supervisor's side (creating and writing entries,
 * the control socket) is in session_server.c. */
#include "session.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"

#define SESSION_JSON_MAX (64 * 1024)

static const char *const state_names[] = {"starting", "running", "retained", "ended", "stale"};

const char *session_state_name(enum session_state s)
{
	return s <= SESSION_STALE ? state_names[s] : "?";
}

bool session_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SESSION_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

bool session_id_valid(const char *id)
{
	if (strlen(id) != SESSION_ID_LEN)
		return false;
	for (size_t i = 0; i < SESSION_ID_LEN; i++)
		if (!strchr("0123456789abcdef", id[i]))
			return false;
	return true;
}

int session_parse_stat(const char *line, char *state, unsigned long long *start_time)
{
	/* "PID (COMM) S PPID ...": COMM may contain ") ", so the fields
	 * start after the last ')'. Field 3 is the state, 22 the start time. */
	const char *p = strrchr(line, ')');
	char *end;

	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -EINVAL;
	*state = p[2];
	p += 3;
	for (int field = 4; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	*start_time = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}

int proc_identity(pid_t pid, struct proc_id *out)
{
	char path[64], buf[1024];
	cleanup_close int fd = -1;
	ssize_t n;
	char state;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ESRCH; /* it exited between open and read */
	buf[n] = '\0';
	out->pid = pid;
	if (session_parse_stat(buf, &state, &out->start_time) < 0)
		return -EINVAL;
	/* A zombie has ended; only its parent's wait is missing. */
	return state == 'Z' || state == 'X' ? -ESRCH : 0;
}

bool proc_alive(const struct proc_id *id)
{
	struct proc_id now;

	return proc_identity(id->pid, &now) == 0 && now.start_time == id->start_time;
}

/* ---------------------------------------------------------------- JSON */

static cJSON *proc_json(const struct proc_id *id)
{
	cJSON *o;

	if (id->pid <= 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddNumberToObject(o, "pid", id->pid);
		cJSON_AddNumberToObject(o, "start_time", (double)id->start_time);
	}
	return o;
}

static void add_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s[0])
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/* Each lease and endpoint names its session, owner and generation, so a
 * client that found it (ps --json) can check it is the one it meant. */
static void add_leases(cJSON *o, const struct session_info *i)
{
	cJSON *a = cJSON_AddArrayToObject(o, "leases");

	for (size_t k = 0; a && k < i->n_leases; k++) {
		const struct session_lease *l = &i->leases[k];
		cJSON *e = cJSON_CreateObject();

		if (!e)
			return;
		cJSON_AddStringToObject(e, "service", l->service);
		cJSON_AddStringToObject(e, "session", i->id);
		cJSON_AddNumberToObject(e, "owner_uid", i->owner);
		cJSON_AddNumberToObject(e, "generation", i->generation);
		cJSON_AddNumberToObject(e, "pid", l->pid);
		cJSON_AddNumberToObject(e, "lease_ms", (double)l->lease_ms);
		add_str_or_null(e, "started", l->started);
		add_str_or_null(e, "expires", l->expires);
		cJSON_AddStringToObject(e, "state", l->state);
		add_str_or_null(e, "ended", l->ended);
		cJSON_AddItemToArray(a, e);
	}
}

static void add_endpoints(cJSON *o, const struct session_info *i)
{
	cJSON *a = cJSON_AddArrayToObject(o, "endpoints");

	for (size_t k = 0; a && k < i->n_endpoints; k++) {
		cJSON *e = cJSON_CreateObject();

		if (!e)
			return;
		cJSON_AddStringToObject(e, "host", i->endpoints[k].host);
		cJSON_AddNumberToObject(e, "sandbox", i->endpoints[k].sandbox);
		cJSON_AddStringToObject(e, "session", i->id);
		cJSON_AddNumberToObject(e, "generation", i->generation);
		cJSON_AddItemToArray(a, e);
	}
}

char *session_info_json(const struct session_info *i)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", i->id);
	add_str_or_null(o, "name", i->name);
	cJSON_AddNumberToObject(o, "owner_uid", i->owner);
	cJSON_AddNumberToObject(o, "generation", i->generation);
	cJSON_AddItemToObject(o, "supervisor", proc_json(&i->supervisor));
	cJSON_AddItemToObject(o, "init", proc_json(&i->init));
	cJSON_AddStringToObject(o, "created", i->created);
	add_str_or_null(o, "expires", i->expires);
	cJSON_AddStringToObject(o, "state", session_state_name(i->state));
	if (i->state == SESSION_ENDED || i->state == SESSION_RETAINED) {
		cJSON_AddNumberToObject(o, "status", i->status);
		cJSON_AddStringToObject(o, "ended", i->ended);
	}
	cJSON_AddStringToObject(o, "policy_sha256", i->policy_sha256);
	cJSON_AddBoolToObject(o, "detached", i->detached);
	add_leases(o, i);
	add_endpoints(o, i);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

/* A whole number in [min, max] (cJSON keeps numbers as doubles). */
static int get_num(const cJSON *o, const char *key, double min, double max, double *out,
		   struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > max ||
	    v->valuedouble != (double)(long long)v->valuedouble)
		return err_set(err, EINVAL, "session.json: %s: expected a whole number", key);
	*out = v->valuedouble;
	return 0;
}

/* A string that fits size, or "" for null when nullable. */
static int get_str(const cJSON *o, const char *key, bool nullable, char *buf, size_t size,
		   struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (nullable && cJSON_IsNull(v)) {
		buf[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= size)
		return err_set(err, EINVAL, "session.json: %s: expected a string", key);
	memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

static int get_proc(const cJSON *o, const char *key, bool nullable, struct proc_id *out,
		    struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double pid, start;

	out->pid = 0;
	out->start_time = 0;
	if (nullable && cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsObject(v) || get_num(v, "pid", 1, INT32_MAX, &pid, err) < 0 ||
	    get_num(v, "start_time", 0, 9007199254740992.0, &start, err) < 0)
		return err_set(err, EINVAL, "session.json: %s: expected {pid, start_time}", key);
	out->pid = (pid_t)pid;
	out->start_time = (unsigned long long)start;
	return 0;
}

/* "leases" and "endpoints" may be missing (entries of older versions). */
static int parse_leases(const cJSON *o, struct session_info *out, struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "leases"), *e;
	double pid, lease;
	int rc;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SESSION_LEASES_MAX)
		return err_set(err, EINVAL, "session.json: leases: expected an array");
	cJSON_ArrayForEach(e, a) {
		struct session_lease *l = &out->leases[out->n_leases++];

		if ((rc = get_str(e, "service", false, l->service, sizeof(l->service), err)) < 0 ||
		    (rc = get_num(e, "pid", 0, INT32_MAX, &pid, err)) < 0 ||
		    (rc = get_num(e, "lease_ms", 0, 9007199254740992.0, &lease, err)) < 0 ||
		    (rc = get_str(e, "started", true, l->started, sizeof(l->started), err)) < 0 ||
		    (rc = get_str(e, "expires", true, l->expires, sizeof(l->expires), err)) < 0 ||
		    (rc = get_str(e, "state", false, l->state, sizeof(l->state), err)) < 0 ||
		    (rc = get_str(e, "ended", true, l->ended, sizeof(l->ended), err)) < 0)
			return rc;
		/* The states the supervisor writes; like the session's own
		 * state, anything else is not an entry of ours. */
		if (strcmp(l->state, "starting") != 0 && strcmp(l->state, "running") != 0 &&
		    strcmp(l->state, "retained") != 0 && strcmp(l->state, "ended") != 0)
			return err_set(err, EINVAL, "session.json: leases: state: unknown \"%s\"",
				       l->state);
		l->pid = (pid_t)pid;
		l->lease_ms = (uint64_t)lease;
	}
	return 0;
}

static int parse_endpoints(const cJSON *o, struct session_info *out, struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "endpoints"), *e;
	double port;
	int rc;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SESSION_ENDPOINTS_MAX)
		return err_set(err, EINVAL, "session.json: endpoints: expected an array");
	cJSON_ArrayForEach(e, a) {
		struct session_endpoint *p = &out->endpoints[out->n_endpoints++];

		if ((rc = get_str(e, "host", false, p->host, sizeof(p->host), err)) < 0 ||
		    (rc = get_num(e, "sandbox", 1, 65535, &port, err)) < 0)
			return rc;
		p->sandbox = (uint16_t)port;
	}
	return 0;
}

static int parse_fields(const cJSON *o, struct session_info *out, struct err *err)
{
	char state[16];
	double owner, gen, status;
	int rc;

	if ((rc = get_str(o, "id", false, out->id, sizeof(out->id), err)) < 0 ||
	    (rc = get_str(o, "name", true, out->name, sizeof(out->name), err)) < 0 ||
	    (rc = get_num(o, "owner_uid", 0, UINT32_MAX - 1.0, &owner, err)) < 0 ||
	    (rc = get_num(o, "generation", 1, UINT32_MAX, &gen, err)) < 0 ||
	    (rc = get_proc(o, "supervisor", false, &out->supervisor, err)) < 0 ||
	    (rc = get_proc(o, "init", true, &out->init, err)) < 0 ||
	    (rc = get_str(o, "created", false, out->created, sizeof(out->created), err)) < 0 ||
	    (rc = get_str(o, "expires", true, out->expires, sizeof(out->expires), err)) < 0 ||
	    (rc = get_str(o, "state", false, state, sizeof(state), err)) < 0 ||
	    (rc = get_str(o, "policy_sha256", false, out->policy_sha256, sizeof(out->policy_sha256),
			  err)) < 0)
		return rc;
	if (!session_id_valid(out->id) || (out->name[0] && !session_name_valid(out->name)))
		return err_set(err, EINVAL, "session.json: bad id or name");
	out->owner = (uid_t)owner;
	out->generation = (unsigned)gen;
	out->detached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "detached"));
	if ((rc = parse_leases(o, out, err)) < 0 || (rc = parse_endpoints(o, out, err)) < 0)
		return rc;
	if (strcmp(state, "starting") == 0)
		out->state = SESSION_STARTING;
	else if (strcmp(state, "running") == 0)
		out->state = SESSION_RUNNING;
	else if (strcmp(state, "retained") == 0)
		out->state = SESSION_RETAINED;
	else if (strcmp(state, "ended") == 0)
		out->state = SESSION_ENDED;
	else
		return err_set(err, EINVAL, "session.json: state: unknown \"%s\"", state);
	if (out->state != SESSION_ENDED && out->state != SESSION_RETAINED)
		return 0;
	if ((rc = get_num(o, "status", 0, 255, &status, err)) < 0 ||
	    (rc = get_str(o, "ended", false, out->ended, sizeof(out->ended), err)) < 0)
		return rc;
	out->status = (int)status;
	return 0;
}

int session_info_parse(const char *text, size_t len, struct session_info *out, struct err *err)
{
	cJSON *o;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > SESSION_JSON_MAX || memchr(text, '\0', len))
		return err_set(err, EINVAL, "session.json: not a JSON text");
	o = cJSON_ParseWithLengthOpts(text, len, NULL, false);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return err_set(err, EINVAL, "session.json: not a JSON object");
	}
	rc = parse_fields(o, out, err);
	cJSON_Delete(o);
	return rc;
}

/* ------------------------------------------------------------ registry */

/* A directory of the caller's that nobody else can enter or change. */
static const char *private_dir_problem(const struct stat *st, char *buf, size_t size)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != getuid()) {
		snprintf(buf, size, "owned by uid %u, not by uid %u", (unsigned)st->st_uid,
			 (unsigned)getuid());
		return buf;
	}
	if ((st->st_mode & 07777) != 0700) {
		snprintf(buf, size, "mode %04o, not 0700", (unsigned)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

static void registry_path(char *path, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	char buf[64];

	/* The runtime directory of pam_systemd (XDG Base Directory spec):
	 * only when it really is the caller's private directory. */
	if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 &&
	    !private_dir_problem(&st, buf, sizeof(buf)) &&
	    snprintf(path, size, "%s/paddock", xdg) < (int)size)
		return;
	snprintf(path, size, "/tmp/paddock-%u", (unsigned)getuid());
}

int session_registry_open(struct registry *reg, bool create, struct err *err)
{
	char path[PATH_MAX], buf[64];
	const char *problem;
	struct stat st;
	bool made = false;
	cleanup_close int fd = -1;

	reg->fd = -1;
	registry_path(path, sizeof(path));
	if (create) {
		/* 0700 whatever the umask; a directory someone else made first
		 * (under /tmp anybody can) is refused below, never used. */
		if (mkdir(path, 0700) == 0)
			made = true;
		else if (errno != EEXIST)
			return err_sys(err, errno, "session registry %s", path);
	}
	/* O_NOFOLLOW: a symlink planted at the name is refused, not followed. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !create)
		return err_set(err, ENOENT, "no session registry at %s", path);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return err_set(err, EPERM, "session registry %s: not a directory (a symlink?)",
			       path);
	if (fd < 0)
		return err_sys(err, errno, "session registry %s", path);
	if (made && fchmod(fd, 0700) < 0)
		return err_sys(err, errno, "session registry %s: chmod", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "session registry %s", path);
	problem = private_dir_problem(&st, buf, sizeof(buf));
	if (problem)
		return err_set(err, EPERM, "session registry %s: %s; refusing to use it", path,
			       problem);
	if (!realpath(path, reg->path))
		return err_sys(err, errno, "session registry %s", path);
	reg->fd = take_fd(&fd);
	return 0;
}

void session_registry_close(struct registry *reg)
{
	if (reg->fd >= 0)
		close(reg->fd);
	reg->fd = -1;
}

/* ------------------------------------------------------------- reading */

static int read_all(int fd, char *buf, size_t size, size_t *len)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, buf + n, size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == size)
			return -EFBIG;
	}
	*len = n;
	return 0;
}

int session_read(const struct registry *reg, const char *id, struct session_info *out,
		 struct err *err)
{
	cleanup_close int dfd = -1, fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int rc;

	if (!session_id_valid(id))
		return err_set(err, ENOENT, "no such session: %s", id);
	dfd = openat(reg->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return err_set(err, ENOENT, "no such session: %s", id);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return err_sys(err, errno, "session %s", id);
	/* Only the supervisor, running as the owner, writes an entry. */
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id, (unsigned)st.st_uid);
	fd = openat(dfd, "session.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return err_set(err, ENOENT, "no such session: %s", id);
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, errno, "session %s", id);
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id, (unsigned)st.st_uid);
	buf = malloc(SESSION_JSON_MAX + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	rc = read_all(fd, buf, SESSION_JSON_MAX + 1, &len);
	if (rc < 0)
		return err_sys(err, rc, "session %s: session.json", id);
	rc = session_info_parse(buf, len, out, err);
	if (rc < 0)
		return err_wrap(err, "session %s", id);
	if (strcmp(out->id, id) != 0)
		return err_set(err, EINVAL, "session %s: session.json names %s", id, out->id);
	if (out->owner != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id,
			       (unsigned)out->owner);
	if (out->state != SESSION_ENDED && !proc_alive(&out->supervisor))
		out->state = SESSION_STALE;
	return 0;
}

static int by_created(const void *a, const void *b)
{
	const struct session_info *x = a, *y = b;
	int c = strcmp(x->created, y->created);

	return c ? c : strcmp(x->id, y->id);
}

int session_list(const struct registry *reg, struct session_info **out, size_t *n, struct err *err)
{
	int fd = fcntl(reg->fd, F_DUPFD_CLOEXEC, 3);
	struct session_info *v = NULL, *nv;
	DIR *d;
	struct dirent *e;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return err_sys(err, errno, "session registry %s", reg->path);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_sys(err, errno, "session registry %s", reg->path);
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		struct session_info info;

		/* Entries of other kinds (names/, half-made ".new-" ones) and
		 * entries that are unreadable or not the caller's are skipped. */
		if (!session_id_valid(e->d_name) || session_read(reg, e->d_name, &info, NULL) < 0)
			continue;
		nv = realloc(v, (count + 1) * sizeof(*v));
		if (!nv) {
			closedir(d);
			free(v);
			return err_set(err, ENOMEM, "out of memory");
		}
		v = nv;
		v[count++] = info;
	}
	closedir(d);
	if (count)
		qsort(v, count, sizeof(*v), by_created);
	*out = v;
	*n = count;
	return 0;
}

static bool live(const struct session_info *i)
{
	return i->state == SESSION_STARTING || i->state == SESSION_RUNNING ||
	       i->state == SESSION_RETAINED;
}

int session_find(const struct registry *reg, const char *what, struct session_info *out,
		 struct err *err)
{
	cleanup_free struct session_info *all = NULL;
	const struct session_info *best = NULL;
	size_t n = 0;
	int rc;

	if (session_id_valid(what)) {
		rc = session_read(reg, what, out, err);
		if (rc != -ENOENT)
			return rc;
	}
	if (!session_name_valid(what))
		return err_set(err, ENOENT, "no such session: %s", what);
	rc = session_list(reg, &all, &n, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, what) != 0)
			continue;
		if (!best || (live(&all[i]) && !live(best)) ||
		    (live(&all[i]) == live(best) && all[i].generation > best->generation))
			best = &all[i];
	}
	if (!best)
		return err_set(err, ENOENT, "no such session: %s", what);
	*out = *best;
	return 0;
}

int session_remove(const struct registry *reg, const char *id)
{
	int dfd = openat(reg->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	/* Flat: session.json, control, stdout, stderr, a temp file. */
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return unlinkat(reg->fd, id, AT_REMOVEDIR) < 0 ? -errno : 0;
}
