/* paddock oci: an OCI runtime with runc's command line (docs/oci.md), so
 * that Docker, Podman and containerd's runc shim run containers under
 * paddock. The same code runs as `paddock oci ...` and as `paddock-oci
 * ...` (a symlink to paddock: engines take one path).
 *
 * A container is one paddock run: `create` translates the bundle's
 * config.json into a paddock policy (supervisor/oci.c), forks the monitor
 * (cmd_oci_run.c), which is paddock's supervisor for the container, and
 * returns once the sandbox's namespaces exist and nothing of the
 * container has run; its pid goes into --pid-file. The engine (the shim or
 * conmon, a subreaper) reaps the monitor, whose exit status is the
 * container's. `start` releases it through the state directory's
 * exec.fifo. */
#include "launcher.h"
#include "oci_cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"

#define OCI_SPEC_VERSION "1.0.2-dev"

static const char usage[] =
    "Usage: paddock oci [GLOBAL OPTION]... COMMAND [OPTION]... ID\n"
    "       paddock-oci [GLOBAL OPTION]... COMMAND [OPTION]... ID\n"
    "An OCI runtime with runc's command line: Docker (--add-runtime), Podman\n"
    "(--runtime) and containerd's runc shim run containers under paddock.\n"
    "\n"
    "Commands:\n"
    "  create --bundle DIR --pid-file FILE [--console-socket S] [--no-pivot]\n"
    "         [--no-new-keyring] [--preserve-fds 0] ID\n"
    "                    make the container; nothing of it runs until start\n"
    "  start ID          run the container's process\n"
    "  state ID          the runtime-spec state document (JSON)\n"
    "  kill [--all] ID [SIGNAL]\n"
    "                    send SIGNAL (default SIGTERM) to the container\n"
    "  delete [--force] ID\n"
    "                    remove a stopped container (--force: kill it first)\n"
    "  exec --process FILE [--detach] [--pid-file FILE] [--console-socket S] [--tty] ID\n"
    "                    run a process (runtime-spec JSON) in a running container\n"
    "  ps [--format json|table] ID\n"
    "                    the container's processes (host pids)\n"
    "  features          what this runtime supports (JSON)\n"
    "\n"
    "Global options:\n"
    "  --root DIR        state directory (default /run/paddock-oci for root,\n"
    "                    $XDG_RUNTIME_DIR/paddock-oci otherwise)\n"
    "  --log FILE        errors also go to FILE\n"
    "  --log-format text|json\n"
    "  --debug           paddock's debug trace on stderr\n"
    "  --systemd-cgroup  accepted: paddock makes the container's cgroup itself\n"
    "  --rootless true|false|auto\n"
    "                    accepted: paddock is rootless in every case\n"
    "  --weaken KNOB[,KNOB]\n"
    "                    paddock run's --weaken for every container (evaluation\n"
    "                    only; in the record and org.paddock.achieved)\n"
    "  -v, --version     runc's three-line version\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 done; 125 any error, with one line on stderr (and in --log);\n"
    "exec without --detach: the process's status. A command or option that is not\n"
    "implemented (pause, resume, update, checkpoint, restore, events, ...) is an\n"
    "error naming it. See paddock-oci(1) and docs/oci.md.\n";

void oci_log(const struct oci_ctx *c, const char *level, const char *text)
{
	FILE *f;

	if (!c || !c->log || !(f = fopen(c->log, "ae")))
		return;
	for (const char *line = text, *end; *line; line = *end ? end + 1 : end) {
		char msg[1024];

		end = strchrnul(line, '\n');
		snprintf(msg, sizeof(msg), "%.*s", (int)(end - line), line);
		if (!msg[0])
			continue;
		if (c->log_json) {
			cJSON *o = cJSON_CreateObject();
			char t[64], *out;
			struct timespec now;
			struct tm tm;

			clock_gettime(CLOCK_REALTIME, &now);
			gmtime_r(&now.tv_sec, &tm);
			strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
			cJSON_AddStringToObject(o, "level", level);
			cJSON_AddStringToObject(o, "msg", msg);
			cJSON_AddStringToObject(o, "time", t);
			out = cJSON_PrintUnformatted(o);
			if (out)
				fprintf(f, "%s\n", out);
			free(out);
			cJSON_Delete(o);
		} else {
			fprintf(f, "paddock oci: %s: %s\n", level, msg);
		}
	}
	fclose(f);
}

int oci_fail(const struct oci_ctx *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "paddock oci: %s\n", msg);
	oci_log(c, "error", msg);
	return EXIT_LAUNCHER;
}

/* Up to size - 1 bytes of fd (until EOF, or what is there with
 * nonblock), NUL-terminated: the count. */
static ssize_t read_all(int fd, char *buf, size_t size, bool nonblock)
{
	size_t n = 0;
	ssize_t k;

	if (nonblock)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	return (ssize_t)n;
}

/* The last non-empty line of text, without "paddock: ". */
static const char *last_line(char *text)
{
	char *end = text + strlen(text), *start;

	while (end > text && end[-1] == '\n')
		*--end = '\0';
	start = strrchr(text, '\n');
	start = start ? start + 1 : text;
	return strncmp(start, "paddock: ", 9) == 0 ? start + 9 : start;
}

uint64_t oci_start_time(pid_t pid)
{
	struct proc_id id;

	/* session/proc.c's reading of /proc/PID/stat; a zombie has ended. */
	return proc_identity(pid, &id) == 0 ? id.start_time : 0;
}

/* ------------------------------------------------------------ the state */

static int state_path(const struct oci_ctx *c, const char *name, char *out, size_t size)
{
	if (snprintf(out, size, "%s/%s", c->dir, name) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int oci_state_write(const struct oci_ctx *c, const struct oci_state *st, const char *annotations,
		    struct err *err)
{
	char path[4200], tmp[4216];
	cJSON *o = cJSON_CreateObject();
	char *text = NULL;
	FILE *f = NULL;
	int rc = 0;

	if (!o || !cJSON_AddStringToObject(o, "id", st->id) ||
	    !cJSON_AddStringToObject(o, "bundle", st->bundle) ||
	    !cJSON_AddStringToObject(o, "session", st->session) ||
	    !cJSON_AddStringToObject(o, "record", st->record) ||
	    !cJSON_AddStringToObject(o, "created", st->created) ||
	    !cJSON_AddNumberToObject(o, "pid", st->pid) ||
	    !cJSON_AddNumberToObject(o, "start", (double)st->start) ||
	    !cJSON_AddNumberToObject(o, "init", st->init) ||
	    !cJSON_AddNumberToObject(o, "init_start", (double)st->init_start) ||
	    !cJSON_AddNumberToObject(o, "uid", st->uid) ||
	    !cJSON_AddNumberToObject(o, "gid", st->gid) ||
	    !cJSON_AddRawToObject(o, "annotations", annotations ? annotations : "{}") ||
	    !(text = cJSON_Print(o)))
		rc = err_set(err, ENOMEM, "out of memory");
	cJSON_Delete(o);
	if (rc == 0 && (state_path(c, "state.json", path, sizeof(path)) < 0 ||
			snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)))
		rc = err_set(err, ENAMETOOLONG, "%s: path too long", c->dir);
	if (rc == 0 && (!(f = fopen(tmp, "wex")) || fputs(text, f) < 0 || fflush(f) != 0 ||
			fsync(fileno(f)) < 0))
		rc = err_sys(err, errno, "%s", tmp);
	if (f && fclose(f) != 0 && rc == 0)
		rc = err_sys(err, errno, "%s", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = err_sys(err, errno, "%s", path);
	free(text);
	return rc;
}

static void copy_str(const cJSON *o, const char *key, char *out, size_t size)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));

	snprintf(out, size, "%s", s ? s : "");
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(it) ? it->valuedouble : 0;
}

/* The annotations of the state file, as JSON text (malloc'd). */
static char *state_annotations(const struct oci_ctx *c)
{
	char path[4200];
	cleanup_free char *text = NULL;
	size_t len;
	cJSON *o, *a;
	char *out = NULL;

	if (state_path(c, "state.json", path, sizeof(path)) < 0 ||
	    evidence_slurp(path, 1u << 20, &text, &len) < 0)
		return NULL;
	o = cJSON_ParseWithLength(text, len);
	a = cJSON_GetObjectItemCaseSensitive(o, "annotations");
	if (cJSON_IsObject(a))
		out = cJSON_PrintUnformatted(a);
	cJSON_Delete(o);
	return out;
}

int oci_state_read(const struct oci_ctx *c, struct oci_state *st)
{
	char path[4200];
	cleanup_free char *text = NULL;
	size_t len;
	cJSON *o;
	int r;

	memset(st, 0, sizeof(*st));
	if (state_path(c, "state.json", path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	r = evidence_slurp(path, 1u << 20, &text, &len);
	if (r < 0)
		return r;
	o = cJSON_ParseWithLength(text, len);
	if (!o)
		return -EINVAL;
	copy_str(o, "id", st->id, sizeof(st->id));
	copy_str(o, "bundle", st->bundle, sizeof(st->bundle));
	copy_str(o, "session", st->session, sizeof(st->session));
	copy_str(o, "record", st->record, sizeof(st->record));
	copy_str(o, "created", st->created, sizeof(st->created));
	st->pid = (pid_t)num(o, "pid");
	st->start = (uint64_t)num(o, "start");
	st->init = (pid_t)num(o, "init");
	st->init_start = (uint64_t)num(o, "init_start");
	st->uid = (uint32_t)num(o, "uid");
	st->gid = (uint32_t)num(o, "gid");
	cJSON_Delete(o);
	return st->pid > 0 ? 0 : -EINVAL;
}

enum oci_status oci_status_of(const struct oci_ctx *c, const struct oci_state *st)
{
	char path[4200];

	if (!st->start || oci_start_time(st->pid) != st->start)
		return OCI_STOPPED;
	if (state_path(c, "started", path, sizeof(path)) == 0 && access(path, F_OK) == 0)
		return OCI_RUNNING;
	return OCI_CREATED;
}

static const char *status_name(enum oci_status s)
{
	return s == OCI_CREATED ? "created" : s == OCI_RUNNING ? "running" : "stopped";
}

char *oci_state_json(const struct oci_ctx *c, const struct oci_state *st, enum oci_status s,
		     pid_t pid)
{
	cJSON *o = cJSON_CreateObject();
	char rootfs[4200], *ann = state_annotations(c), *out = NULL;
	cJSON *a = ann ? cJSON_Parse(ann) : NULL;

	free(ann);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", st->bundle);
	if (!a)
		a = cJSON_CreateObject();
	if (o && a && cJSON_AddStringToObject(o, "ociVersion", OCI_SPEC_VERSION) &&
	    cJSON_AddStringToObject(o, "id", st->id) &&
	    cJSON_AddNumberToObject(o, "pid", s == OCI_STOPPED ? 0 : pid) &&
	    cJSON_AddStringToObject(o, "status", status_name(s)) &&
	    cJSON_AddStringToObject(o, "bundle", st->bundle) &&
	    cJSON_AddStringToObject(o, "rootfs", rootfs) &&
	    cJSON_AddStringToObject(o, "created", st->created) &&
	    cJSON_AddStringToObject(o, "owner", "") && cJSON_AddItemToObject(o, "annotations", a))
		out = cJSON_Print(o);
	else
		cJSON_Delete(a);
	cJSON_Delete(o);
	return out;
}

/* ------------------------------------------------------------- commands */

static int remove_state(const struct oci_ctx *c);

/* ID: what runc accepts, and a file name. */
static bool id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > OCI_ID_MAX || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return false;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-") ==
	       n;
}

static int set_id(struct oci_ctx *c, const char *id)
{
	if (!id_valid(id))
		return oci_fail(c, "container id \"%s\": 1 to %d of [A-Za-z0-9_.+-]", id,
				OCI_ID_MAX);
	c->id = id;
	if (snprintf(c->dir, sizeof(c->dir), "%s/%s", c->root, id) >= (int)sizeof(c->dir))
		return oci_fail(c, "--root %s: too long", c->root);
	return 0;
}

/* The container of c->id: 0 with st filled, or the error printed. */
static int lookup(struct oci_ctx *c, struct oci_state *st)
{
	int r = oci_state_read(c, st);

	if (r == -ENOENT)
		return oci_fail(c, "container \"%s\" does not exist", c->id);
	if (r < 0)
		return oci_fail(c, "container \"%s\": %s/state.json: %s", c->id, c->dir,
				strerror(-r));
	return 0;
}

/* mkdir -p of the root, 0700 where we make it. */
static int make_root(const char *root, struct err *err)
{
	char buf[4096];

	if (snprintf(buf, sizeof(buf), "%s", root) >= (int)sizeof(buf) || root[0] != '/')
		return err_set(err, EINVAL, "--root %s: an absolute path", root);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char save = *p;

			*p = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return err_sys(err, errno, "--root %s", buf);
			*p = save;
			if (!save)
				break;
		}
	}
	return 0;
}

/* The rootfs' top entries, for the policy's binds. */
static int list_rootfs(const char *root, struct oci_entry **out, size_t *n, struct err *err)
{
	DIR *d = opendir(root);
	struct dirent *e;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return err_sys(err, errno, "root.path %s", root);
	while ((e = readdir(d))) {
		char path[4200], link[4096];
		struct stat st;
		ssize_t k;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (*n == cap) {
			struct oci_entry *v =
			    realloc(*out, (cap = cap ? cap * 2 : 32) * sizeof(*v));

			if (!v) {
				closedir(d);
				return err_set(err, ENOMEM, "out of memory");
			}
			*out = v;
		}
		(*out)[*n] = (struct oci_entry){.name = strdup(e->d_name)};
		if (S_ISLNK(st.st_mode) && (k = readlink(path, link, sizeof(link) - 1)) > 0) {
			link[k] = '\0';
			(*out)[*n].kind = OCI_ENTRY_SYMLINK;
			(*out)[*n].link = strdup(link);
		} else if (S_ISDIR(st.st_mode)) {
			(*out)[*n].kind = OCI_ENTRY_DIR;
		} else if (S_ISREG(st.st_mode)) {
			(*out)[*n].kind = OCI_ENTRY_FILE;
		} else {
			/* A device node or socket at the top of a rootfs: not
			 * bound (paddock's binds are nodev anyway). */
			free((void *)(*out)[*n].name);
			continue;
		}
		(*n)++;
	}
	closedir(d);
	return 0;
}

static void entries_free(struct oci_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)v[i].name);
		free((void *)v[i].link);
	}
	free(v);
}

/* As runc, a bind's source is the engine's path with its symlinks
 * resolved on the host (Docker's --init binds /usr/bin/docker-init, a
 * symlink); paddock's own bind then refuses any symlink it meets. A
 * source that does not resolve is left for paddock's message. */
static void resolve_sources(struct oci_config *cfg)
{
	cJSON *m, *mounts = cJSON_GetObjectItemCaseSensitive(cfg->policy, "mounts");

	cJSON_ArrayForEach(m, mounts) {
		const char *type =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
		cJSON *src = cJSON_GetObjectItemCaseSensitive(m, "source");
		char real[PATH_MAX];

		if (type && strcmp(type, "bind") == 0 && cJSON_IsString(src) &&
		    realpath(src->valuestring, real) && strcmp(real, src->valuestring) != 0 &&
		    !strstr(real, "${"))
			cJSON_SetValuestring(src, real);
	}
}

/* config.json of bundle into cfg, with the policy text made: 0, or the
 * error printed. */
/* annotation org.paddock.weaken into cfg->weaken: 0, or the length of
 * the first name that is no knob (it starts the text, which is then
 * moved so that it does). */
static int weaken_names(struct oci_config *cfg)
{
	char *s = cfg->weaken_names;

	while (*s) {
		size_t n = strcspn(s, ",+");
		char name[64];
		uint64_t bit;

		snprintf(name, sizeof(name), "%.*s", (int)n, s);
		if (n == 0 || n >= sizeof(name) || weaken_parse(name, &bit) < 0) {
			memmove(cfg->weaken_names, s, strlen(s) + 1);
			return n ? (int)n : 1;
		}
		cfg->weaken |= bit;
		s += n + (s[n] != '\0');
	}
	return 0;
}

static int load_bundle(const struct oci_ctx *c, const char *bundle, struct oci_config *cfg)
{
	cleanup_free char *text = NULL, *extra = NULL;
	struct oci_entry *ents = NULL;
	size_t len, extra_len = 0, n = 0;
	char path[4200];
	struct err err = {0};
	struct statfs sf;
	struct stat st;
	int r;

	if (stat(bundle, &st) < 0 || !S_ISDIR(st.st_mode))
		return oci_fail(c, "bundle %s: %s", bundle,
				errno && !S_ISDIR(st.st_mode) ? strerror(errno)
							      : "not a directory");
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	r = evidence_slurp(path, OCI_CONFIG_MAX_BYTES, &text, &len);
	if (r < 0)
		return oci_fail(c, "bundle %s: config.json: %s", bundle, strerror(-r));
	if (oci_config_parse(text, len, bundle, cfg, &err) < 0)
		return oci_fail(c, "%s: %s", path, err.msg);
	/* Before anything is made: a path that is not a namespace of its
	 * type fails create with nothing started. */
	if (oci_join_open(cfg, &err) < 0)
		return oci_config_free(cfg), oci_fail(c, "%s: %s", path, err.msg);
	if (c->weaken) {
		char *both = NULL;

		if (asprintf(&both, "%s%s%s", c->weaken, cfg->weaken_names ? "," : "",
			     cfg->weaken_names ? cfg->weaken_names : "") < 0)
			return oci_config_free(cfg), oci_fail(c, "out of memory");
		free(cfg->weaken_names);
		cfg->weaken_names = both;
	}
	if (cfg->weaken_names && (r = weaken_names(cfg)) != 0) {
		r = oci_fail(
		    c, "%s: --weaken or annotations.org.paddock.weaken: unknown knob \"%.*s\"",
		    path, r, cfg->weaken_names);
		oci_config_free(cfg);
		return r;
	}
	/* The rootfs itself must not be a symlink: the engine's bundle says
	 * which directory, and a link would let whoever can change it pick
	 * another one between this check and the mounts. */
	if (lstat(cfg->root, &st) < 0)
		r = oci_fail(c, "root.path %s: %s", cfg->root, strerror(errno));
	else if (S_ISLNK(st.st_mode))
		r = oci_fail(c, "root.path %s: is a symlink (give the directory itself)",
			     cfg->root);
	else if (!S_ISDIR(st.st_mode))
		r = oci_fail(c, "root.path %s: not a directory", cfg->root);
	if (r != 0)
		return oci_config_free(cfg), r;
	if (cfg->policy_ref &&
	    (r = evidence_slurp(cfg->policy_ref, 1u << 20, &extra, &extra_len)) < 0)
		return oci_config_free(cfg), oci_fail(c, "annotations.org.paddock.policy %s: %s",
						      cfg->policy_ref, strerror(-r));
	/* A root caller's workload is an unprivileged uid, and a writable
	 * bind is idmapped for it (sandbox/userns.c), which overlayfs (the
	 * rootfs of Docker and Podman) refuses. */
	if (supervisor_host_root() && statfs(cfg->root, &sf) == 0 &&
	    sf.f_type == OVERLAYFS_SUPER_MAGIC)
		cfg->root_force_ro = true;
	/* A root caller's workload cannot pass the engine's 0700 directories
	 * on the way to the rootfs: the monitor binds the rootfs, in a mount
	 * namespace of its own, at a path it can (oci_monitor()). */
	if (supervisor_host_root() &&
	    asprintf(&cfg->root_view, "%s/%s.%d", OCI_VIEW_DIR, c->id, (int)getpid()) < 0) {
		cfg->root_view = NULL;
		oci_config_free(cfg);
		return oci_fail(c, "out of memory");
	}
	resolve_sources(cfg);
	if (list_rootfs(cfg->root, &ents, &n, &err) < 0 ||
	    oci_config_policy(cfg, ents, n, extra, extra_len, &err) < 0) {
		entries_free(ents, n);
		oci_config_free(cfg);
		return oci_fail(c, "%s: %s", path, err.msg);
	}
	entries_free(ents, n);
	return 0;
}

static int oci_create(struct oci_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"bundle", required_argument, NULL, 'b'},
	    {"pid-file", required_argument, NULL, 'p'},
	    {"console-socket", required_argument, NULL, 'c'},
	    {"no-pivot", no_argument, NULL, 'n'},
	    {"no-new-keyring", no_argument, NULL, 'k'},
	    {"preserve-fds", required_argument, NULL, 'f'},
	    {"detach", no_argument, NULL, 'd'},
	    {NULL, 0, NULL, 0},
	};
	const char *bundle = ".", *pid_file = NULL, *console = NULL;
	char bundle_abs[4096], buf[32], msg[2048];
	struct oci_config cfg;
	struct err err = {0};
	int ch, r, ready[2], errp[2];
	ssize_t n;
	pid_t pid;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:b:", opts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			bundle = optarg;
			break;
		case 'p':
			pid_file = optarg;
			break;
		case 'c':
			console = optarg;
			break;
		case 'n': /* paddock's root is a tmpfs of its own, pivoted into */
		case 'k': /* no session keyring is joined: keyctl is refused */
		case 'd': /* create always returns once the container is made */
			break;
		case 'f':
			/* LISTEN_FDS-style passing is not implemented. */
			if (strcmp(optarg, "0") != 0)
				return oci_fail(
				    c, "create --preserve-fds %s: not supported (0 only)", optarg);
			break;
		default:
			return oci_fail(c, "create: %s: %s", argv[optind - 1],
					ch == ':' ? "needs an argument" : "unknown option");
		}
	}
	if (optind != argc - 1)
		return oci_fail(c, "create: one container id expected");
	if ((r = set_id(c, argv[optind])) != 0)
		return r;
	if (!realpath(bundle, bundle_abs))
		return oci_fail(c, "bundle %s: %s", bundle, strerror(errno));
	if ((r = load_bundle(c, bundle_abs, &cfg)) != 0)
		return r;
	/* runc's rule: a terminal comes with the socket its master goes to,
	 * and the socket only with a terminal. */
	if (cfg.terminal != !!console) {
		oci_config_free(&cfg);
		return oci_fail(c, "%s",
				console ? "create --console-socket: process.terminal is false"
					: "process.terminal: needs --console-socket");
	}
	c->console = console;
	if (make_root(c->root, &err) < 0) {
		oci_config_free(&cfg);
		return oci_fail(c, "%s", err.msg);
	}
	if (mkdir(c->dir, 0700) < 0) {
		char p[4200];
		int e = errno;

		snprintf(p, sizeof(p), "%s/state.json", c->dir);
		if (e != EEXIST || access(p, F_OK) == 0) {
			oci_config_free(&cfg);
			return e == EEXIST ? oci_fail(c, "container with id exists: %s", c->id)
					   : oci_fail(c, "%s: %s", c->dir, strerror(e));
		}
	}
	/* ready: the monitor's "ok" once the container is made; errp: its
	 * stderr until then, so that an error of the supervisor reaches
	 * --log (the engine reads its message there). */
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		oci_config_free(&cfg);
		return oci_fail(c, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		oci_config_free(&cfg);
		return oci_fail(c, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int saved = fcntl(2, F_DUPFD_CLOEXEC, 10);

		close(ready[0]);
		close(errp[0]);
		if (saved < 0 || dup2(errp[1], 2) < 0)
			_exit(EXIT_LAUNCHER);
		close(errp[1]);
		oci_monitor(c, &cfg, bundle_abs, ready[1], saved);
	}
	close(ready[1]);
	close(errp[1]);
	oci_config_free(&cfg);
	r = (int)read(ready[0], buf, sizeof(buf) - 1);
	close(ready[0]);
	if (r <= 0 || strncmp(buf, "ok", 2) != 0) {
		int status = 0;

		n = read_all(errp[0], msg, sizeof(msg), false);
		close(errp[0]);
		waitpid(pid, &status, 0);
		(void)remove_state(c);
		return oci_fail(
		    c, "create %s: %s", c->id,
		    n > 0 ? last_line(msg)
			  : "the container's monitor ended before the container was made");
	}
	/* What the supervisor warned of (a policy wider than paddock's agent
	 * policy, limits not enforced): into the log, not the container's
	 * output. Written before "ok", so it is there now. */
	n = read_all(errp[0], msg, sizeof(msg), true);
	close(errp[0]);
	if (n > 0)
		oci_log(c, "warning", msg);
	if (pid_file) {
		FILE *f = fopen(pid_file, "we");

		if (!f || fprintf(f, "%d", (int)pid) < 0 || fclose(f) != 0) {
			kill(pid, SIGKILL);
			return oci_fail(c, "--pid-file %s: %s", pid_file, strerror(errno));
		}
	}
	return 0;
}

/* The hooks of kind, with config.json read again from the bundle (the
 * engine's until delete returns): 0, or the error printed. */
static int run_hooks_again(const struct oci_ctx *c, const struct oci_state *st,
			   enum oci_hook_kind kind, enum oci_status status)
{
	cleanup_free char *text = NULL, *state = NULL;
	struct oci_config cfg;
	struct err err = {0};
	char path[4200];
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/config.json", st->bundle);
	if (evidence_slurp(path, OCI_CONFIG_MAX_BYTES, &text, &len) < 0 ||
	    oci_config_parse(text, len, st->bundle, &cfg, &err) < 0)
		return 0; /* nothing to run: create parsed it, the engine changed it since */
	if (!cfg.n_hooks[kind]) {
		oci_config_free(&cfg);
		return 0;
	}
	state = oci_state_json(c, st, status, status == OCI_STOPPED ? 0 : st->init);
	r = state ? oci_hooks_run(&cfg, kind, state, &err) : err_set(&err, ENOMEM, "out of memory");
	oci_config_free(&cfg);
	return r < 0 ? oci_fail(c, "%s", err.msg) : 0;
}

static int oci_start(struct oci_ctx *c, int argc, char **argv)
{
	struct oci_state st;
	char path[4200];
	int fd, r;

	if (argc != 2)
		return oci_fail(c, "start: one container id expected");
	if ((r = set_id(c, argv[1])) != 0 || (r = lookup(c, &st)) != 0)
		return r;
	if (oci_status_of(c, &st) != OCI_CREATED)
		return oci_fail(c, "cannot start a container that is %s",
				status_name(oci_status_of(c, &st)));
	state_path(c, "started", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return oci_fail(c, "cannot start %s: %s", c->id,
				errno == EEXIST ? "already started" : strerror(errno));
	close(fd);
	state_path(c, "exec.fifo", path, sizeof(path));
	/* O_NONBLOCK: ENXIO when the monitor no longer reads it (gone). */
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		r = errno;
		if (fd >= 0)
			close(fd);
		return oci_fail(c, "cannot start %s: container not running (%s)", c->id,
				strerror(r));
	}
	close(fd);
	/* runc's start returns once the process runs: so do we, once the
	 * session says so (an exec right after would find it starting), or
	 * the container ended first. */
	for (int k = 0; k < 3000 && oci_start_time(st.pid) == st.start; k++) {
		struct session_info info;
		struct registry reg;
		struct err err = {0};
		bool up;

		if (cli_lookup(&reg, st.session, &info, &err) < 0)
			break;
		up = info.state != SESSION_STARTING;
		session_registry_close(&reg);
		if (up)
			break;
		usleep(2000);
	}
	return run_hooks_again(c, &st, OCI_HOOK_POSTSTART, OCI_RUNNING);
}

static int oci_state_cmd(struct oci_ctx *c, int argc, char **argv)
{
	struct oci_state st;
	char *text;
	int r;

	if (argc != 2)
		return oci_fail(c, "state: one container id expected");
	if ((r = set_id(c, argv[1])) != 0 || (r = lookup(c, &st)) != 0)
		return r;
	text = oci_state_json(c, &st, oci_status_of(c, &st), st.pid);
	if (!text)
		return oci_fail(c, "out of memory");
	puts(text);
	free(text);
	return 0;
}

static int signal_of(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {{"HUP", SIGHUP},   {"INT", SIGINT},	  {"QUIT", SIGQUIT},  {"KILL", SIGKILL},
		    {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},  {"ALRM", SIGALRM},
		    {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"WINCH", SIGWINCH}};
	char *end;
	long n;

	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(sigs[i].name, s) == 0)
			return sigs[i].sig;
	n = strtol(s, &end, 10);
	return *s && !*end && n > 0 && n < 65 ? (int)n : -1;
}

static int oci_kill(struct oci_ctx *c, int argc, char **argv)
{
	struct oci_state st;
	enum oci_status s;
	int sig = SIGTERM, i = 1, r;
	pid_t to;

	if (i < argc && (strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-a") == 0))
		i++;
	if (i >= argc || argc - i > 2)
		return oci_fail(c, "kill: usage: kill [--all] ID [SIGNAL]");
	if ((r = set_id(c, argv[i])) != 0 || (r = lookup(c, &st)) != 0)
		return r;
	if (argc - i == 2 && (sig = signal_of(argv[i + 1])) < 0)
		return oci_fail(c, "kill: unknown signal \"%s\"", argv[i + 1]);
	s = oci_status_of(c, &st);
	if (s == OCI_STOPPED)
		return oci_fail(c, "container not running");
	/* A running container: the signal goes to its PID 1, paddock-init,
	 * which passes it on to the workload (SIGKILL ends the pid namespace;
	 * the monitor then writes the record and exits 137). Before start,
	 * the monitor holds the container: it gets the signal. --all is the
	 * same: every process of the container is in PID 1's namespace. */
	to = st.pid;
	if (s == OCI_RUNNING && st.init > 0 && oci_start_time(st.init) == st.init_start)
		to = st.init;
	if (kill(to, sig) < 0)
		return oci_fail(c, "kill %s: %s", c->id, strerror(errno));
	return 0;
}

/* A monitor killed before it removed its rootfs view leaves an empty
 * directory OCI_VIEW_DIR/ID.PID on the host (oci_monitor()). */
static void remove_views(const char *id)
{
	size_t n = strlen(id);
	struct dirent *e;
	DIR *d = opendir(OCI_VIEW_DIR);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, id, n) == 0 && e->d_name[n] == '.' &&
		    strspn(e->d_name + n + 1, "0123456789") == strlen(e->d_name + n + 1))
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	closedir(d);
}

static int remove_state(const struct oci_ctx *c)
{
	static const char *const names[] = {"state.json", "exec.fifo", "started", "policy.json",
					    NULL};
	char path[4200];

	for (size_t i = 0; names[i]; i++) {
		state_path(c, names[i], path, sizeof(path));
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	}
	return rmdir(c->dir) < 0 ? -errno : 0;
}

static int oci_delete(struct oci_ctx *c, int argc, char **argv)
{
	struct oci_state st;
	bool force = false;
	int i = 1, r;

	if (i < argc && (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0))
		force = true, i++;
	if (i != argc - 1)
		return oci_fail(c, "delete: usage: delete [--force] ID");
	if ((r = set_id(c, argv[i])) != 0)
		return r;
	r = oci_state_read(c, &st);
	if (r == -ENOENT && force) {
		(void)remove_state(c);
		return 0;
	}
	if ((r = lookup(c, &st)) != 0)
		return r;
	if (oci_status_of(c, &st) != OCI_STOPPED) {
		if (!force)
			return oci_fail(c, "cannot delete container %s that is not stopped: %s",
					c->id, status_name(oci_status_of(c, &st)));
		kill(st.pid, SIGKILL);
		/* The engine reaps it; until then it is a zombie, which
		 * oci_start_time() takes for gone. */
		for (int k = 0; k < 500 && oci_start_time(st.pid) == st.start; k++)
			usleep(10000);
	}
	/* runtime-spec: a poststop hook's failure is a warning only. */
	if (run_hooks_again(c, &st, OCI_HOOK_POSTSTOP, OCI_STOPPED) != 0)
		oci_fail(c, "warning: delete %s: a poststop hook failed (above)", c->id);
	remove_views(c->id);
	if ((r = remove_state(c)) < 0)
		return oci_fail(c, "delete %s: %s", c->dir, strerror(-r));
	return 0;
}

/* The host pids of the processes in the container's pid namespace. */
static int oci_ps(struct oci_ctx *c, int argc, char **argv)
{
	struct oci_state st;
	char want[64], path[300], ns[64];
	bool table = false, first = true;
	struct dirent *e;
	ssize_t k;
	int i = 1, r;
	DIR *d;

	if (i + 1 < argc && strcmp(argv[i], "--format") == 0) {
		if (strcmp(argv[i + 1], "json") != 0 && strcmp(argv[i + 1], "table") != 0)
			return oci_fail(c, "ps --format %s: json or table", argv[i + 1]);
		table = strcmp(argv[i + 1], "table") == 0;
		i += 2;
	} else if (i < argc && strncmp(argv[i], "--format=", 9) == 0) {
		table = strcmp(argv[i] + 9, "table") == 0;
		if (!table && strcmp(argv[i] + 9, "json") != 0)
			return oci_fail(c, "ps %s: json or table", argv[i]);
		i++;
	}
	if (i != argc - 1)
		return oci_fail(c, "ps: usage: ps [--format json|table] ID (ps(1) options are not "
				   "supported)");
	if ((r = set_id(c, argv[i])) != 0 || (r = lookup(c, &st)) != 0)
		return r;
	if (oci_status_of(c, &st) == OCI_STOPPED || oci_start_time(st.init) != st.init_start) {
		puts(table ? "PID" : "[]");
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)st.init);
	k = readlink(path, want, sizeof(want) - 1);
	if (k <= 0)
		return oci_fail(c, "ps %s: %s: %s", c->id, path, strerror(errno));
	want[k] = '\0';
	if (!(d = opendir("/proc")))
		return oci_fail(c, "ps: /proc: %s", strerror(errno));
	fputs(table ? "PID\n" : "[", stdout);
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", e->d_name);
		k = readlink(path, ns, sizeof(ns) - 1);
		if (k <= 0)
			continue;
		ns[k] = '\0';
		if (strcmp(ns, want) != 0)
			continue;
		printf(table ? "%s\n" : "%s%s",
		       table   ? e->d_name
		       : first ? ""
			       : ",",
		       table ? "" : e->d_name);
		first = false;
	}
	closedir(d);
	if (!table)
		puts("]");
	return 0;
}

static int oci_features(struct oci_ctx *c, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return oci_fail(c, "features: no arguments");
	puts("{\n"
	     "  \"ociVersionMin\": \"1.0.0\",\n"
	     "  \"ociVersionMax\": \"1.1.0\",\n"
	     "  \"hooks\": [\"prestart\", \"createRuntime\", \"poststart\", \"poststop\"],\n"
	     "  \"mountOptions\": [\"bind\", \"rbind\", \"ro\", \"rw\", \"nosuid\", \"nodev\", "
	     "\"noexec\", \"relatime\", \"strictatime\", \"noatime\", \"nodiratime\", "
	     "\"private\", \"rprivate\", \"slave\", \"rslave\", \"size\", \"mode\"],\n"
	     "  \"linux\": {\n"
	     "    \"namespaces\": [\"pid\", \"network\", \"mount\", \"ipc\", \"uts\", \"user\", "
	     "\"cgroup\"],\n"
	     "    \"capabilities\": [],\n"
	     "    \"cgroup\": {\"v1\": false, \"v2\": true, \"systemd\": false, "
	     "\"systemdUser\": false},\n"
	     "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\", "
	     "\"SCMP_ACT_ERRNO\", \"SCMP_ACT_KILL\", \"SCMP_ACT_KILL_PROCESS\", "
	     "\"SCMP_ACT_KILL_THREAD\", \"SCMP_ACT_LOG\", \"SCMP_ACT_TRACE\", \"SCMP_ACT_TRAP\"], "
	     "\"operators\": [\"SCMP_CMP_EQ\", \"SCMP_CMP_GE\", \"SCMP_CMP_GT\", \"SCMP_CMP_LE\", "
	     "\"SCMP_CMP_LT\", \"SCMP_CMP_MASKED_EQ\", \"SCMP_CMP_NE\"]},\n"
	     "    \"apparmor\": {\"enabled\": false},\n"
	     "    \"selinux\": {\"enabled\": false}\n"
	     "  },\n"
	     "  \"annotations\": {\"org.paddock.oci.annotations\": \"org.paddock.policy "
	     "org.paddock.ttl\"}\n"
	     "}");
	return 0;
}

static const char *default_root(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (supervisor_host_root())
		return "/run/paddock-oci";
	if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/paddock-oci", xdg);
	else
		snprintf(buf, size, "/tmp/paddock-oci-%u", (unsigned)getuid());
	return buf;
}

int cmd_oci(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"root", required_argument, NULL, 'r'},
	    {"log", required_argument, NULL, 'l'},
	    {"log-format", required_argument, NULL, 'f'},
	    {"debug", no_argument, NULL, 'd'},
	    {"systemd-cgroup", no_argument, NULL, 's'},
	    {"rootless", required_argument, NULL, 'R'},
	    {"weaken", required_argument, NULL, 'w'},
	    {"version", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const struct {
		const char *name;
		int (*fn)(struct oci_ctx *c, int argc, char **argv);
	} verbs[] = {{"create", oci_create},	{"start", oci_start},	{"state", oci_state_cmd},
		     {"kill", oci_kill},	{"delete", oci_delete}, {"ps", oci_ps},
		     {"features", oci_features}};
	struct oci_ctx c = {0};
	char rootbuf[4096];
	int ch;

	optind = 1;
	opterr = 0;
	/* "+": the global options end at the command. */
	while ((ch = getopt_long(argc, argv, "+:vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			c.root = optarg;
			break;
		case 'l':
			c.log = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				return oci_fail(&c, "--log-format %s: text or json", optarg);
			c.log_json = strcmp(optarg, "json") == 0;
			break;
		case 'd':
			setenv("PADDOCK_DEBUG", "1", 1);
			break;
		case 's':
			break;
		case 'w':
			c.weaken = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "true") != 0 && strcmp(optarg, "false") != 0 &&
			    strcmp(optarg, "auto") != 0)
				return oci_fail(&c, "--rootless %s: true, false or auto", optarg);
			break;
		case 'v':
			/* go-runc's parseVersion() wants exactly these three lines. */
			printf("paddock-oci version %s\ncommit: %s\nspec: %s\n", PADDOCK_VERSION,
			       PADDOCK_COMMIT, OCI_SPEC_VERSION);
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return oci_fail(&c, "%s: %s", argv[optind - 1],
					ch == ':' ? "needs an argument" : "unknown global option");
		}
	}
	if (!c.root)
		c.root = default_root(rootbuf, sizeof(rootbuf));
	if (optind >= argc)
		return oci_fail(&c, "no command given (see paddock oci --help)");
	if (strcmp(argv[optind], "exec") == 0)
		return oci_exec(&c, argc - optind, argv + optind);
	if (strcmp(argv[optind], "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, argv[optind]) == 0)
			return verbs[i].fn(&c, argc - optind, argv + optind);
	return oci_fail(&c, "command \"%s\" is not implemented by paddock oci", argv[optind]);
}
