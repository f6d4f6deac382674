/* The secret-marker scan (secret_scan.h). */
#include "secret_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (1u << 20)

const char *const scan_form_names[SCAN_FORMS] = {
    "raw",	   "hex",	  "HEX", "base64-0", "base64-1", "base64-2", "base64url-0",
    "base64url-1", "base64url-2", "%XX", "%xx",	     "\\u00XX",	 "\\u00xx",  "json-raw",
};

/* The base64 characters of m preceded by a other bytes whose six bits are
 * all m's. */
static void b64(const char *m, size_t n, unsigned a, bool url, char *out)
{
	const char *al = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			     : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t k = 0;

	for (size_t i = (8 * a + 5) / 6; 6 * i + 6 <= 8 * (a + n); i++) {
		unsigned v = 0;

		for (size_t b = 6 * i; b < 6 * i + 6; b++)
			v = v << 1 |
			    (b / 8 < a ? 0 : ((unsigned char)m[b / 8 - a] >> (7 - b % 8)) & 1);
		out[k++] = al[v];
	}
	out[k] = '\0';
}

size_t scan_forms(const char *marker, char out[SCAN_FORMS][SCAN_FORM_LEN])
{
	size_t n = strnlen(marker, SCAN_MARKER_MAX);

	snprintf(out[0], SCAN_FORM_LEN, "%.*s", (int)n, marker);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)marker[i];

		snprintf(out[1] + 2 * i, 3, "%02x", c);
		snprintf(out[2] + 2 * i, 3, "%02X", c);
		snprintf(out[9] + 3 * i, 4, "%%%02X", c);
		snprintf(out[10] + 3 * i, 4, "%%%02x", c);
		snprintf(out[11] + 6 * i, 7, "\\u%04X", c);
		snprintf(out[12] + 6 * i, 7, "\\u%04x", c);
	}
	if (!n)
		for (int f = 1; f <= 12; f++)
			out[f][0] = '\0';
	for (unsigned a = 0; a < 3; a++) {
		b64(marker, n, a, false, out[3 + a]);
		b64(marker, n, a, true, out[6 + a]);
	}
	/* JSON's own escapes: a '/' as "\/" (the rest as it is). */
	for (size_t i = 0, k = 0; i <= n; i++) {
		if (i < n && marker[i] == '/')
			out[13][k++] = '\\';
		out[13][k++] = i < n ? marker[i] : '\0';
	}
	return SCAN_FORMS;
}

bool scan_has_raw(const char *buf, size_t n, const char *marker)
{
	return memmem(buf, n, marker, strlen(marker)) != NULL;
}

bool scan_has(const char *buf, size_t n, const char *marker)
{
	static __thread char forms[SCAN_FORMS][SCAN_FORM_LEN];
	static __thread char last[SCAN_MARKER_MAX + 1];

	if (strncmp(last, marker, sizeof(last)) != 0) {
		scan_forms(marker, forms);
		snprintf(last, sizeof(last), "%.*s", SCAN_MARKER_MAX, marker);
	}
	for (size_t f = 0; f < SCAN_FORMS; f++)
		if (forms[f][0] && memmem(buf, n, forms[f], strlen(forms[f])))
			return true;
	return false;
}

__attribute__((format(printf, 2, 3))) static void note(struct scan_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->n_where == SCAN_WHERE_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(r->where[r->n_where++], SCAN_WHERE_LEN, fmt, ap);
	va_end(ap);
}

void scan_text(const char *label, const char *buf, size_t n, const char *marker,
	       struct scan_result *r)
{
	r->looked++;
	r->bytes += n;
	if (scan_has(buf, n, marker)) {
		r->places++;
		note(r, "%s", label);
	}
}

/* fd read to its end in chunks, the marker looked for across them. */
static bool fd_has(int fd, const char *marker, uint64_t *bytes, bool *ok)
{
	size_t m = 6 * strlen(marker), keep = 0; /* the longest form's length */
	char *buf = malloc(CHUNK + m);
	bool hit = false;

	*ok = buf != NULL;
	while (buf && !hit) {
		ssize_t n = read(fd, buf + keep, CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			*ok = false;
		if (n <= 0)
			break;
		*bytes += (uint64_t)n;
		hit = scan_has(buf, keep + (size_t)n, marker);
		if (keep + (size_t)n >= m) {
			memmove(buf, buf + keep + (size_t)n - (m - 1), m - 1);
			keep = m - 1;
		} else {
			keep += (size_t)n;
		}
	}
	free(buf);
	return hit;
}

void scan_file(const char *path, const char *marker, struct scan_result *r)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	bool ok;

	if (fd < 0 && errno == ENOENT)
		return;
	r->looked++;
	if (fd < 0) {
		r->unread++;
		note(r, "+%s (unread)", path);
		return;
	}
	if (fd_has(fd, marker, &r->bytes, &ok)) {
		r->places++;
		note(r, "%s", path);
	} else if (!ok) {
		r->unread++;
		note(r, "+%s (unread)", path);
	}
	close(fd);
}

static const char *tree_marker;
static struct scan_result *tree_result;

static int tree_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode))
		scan_file(path, tree_marker, tree_result);
	return 0;
}

void scan_tree(const char *dir, const char *marker, struct scan_result *r)
{
	tree_marker = marker;
	tree_result = r;
	(void)nftw(dir, tree_entry, 32, FTW_PHYS);
}

static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* The pid namespace of pid ("pid:[N]"), or "" when unreadable. */
static void pidns(pid_t pid, char *out, size_t size)
{
	char path[64];
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	k = readlink(path, out, size - 1);
	out[k > 0 ? k : 0] = '\0';
}

pid_t scan_find(const char *tag)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;
	char own[64];

	pidns(getpid(), own, sizeof(own));
	while (d && found < 0 && (e = readdir(d))) {
		char path[64], buf[4096], ns[64];
		pid_t pid = (pid_t)atoi(e->d_name);
		ssize_t n;

		if (pid <= 0 || pid == getpid())
			continue;
		/* A sandbox's process, not paddock's (whose argv holds the
		 * workload's command line too). */
		pidns(pid, ns, sizeof(ns));
		if (!ns[0] || strcmp(ns, own) == 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		n = slurp(path, buf, sizeof(buf));
		if (n > 0 && scan_has(buf, (size_t)n, tag))
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/* The readable mappings of pid, read through /proc/PID/mem. */
static void scan_mem(pid_t pid, const char *marker, struct scan_result *r)
{
	char path[64], line[512];
	FILE *maps;
	int mem;
	bool hit = false, any = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	r->looked++;
	while (maps && mem >= 0 && !hit && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[8];
		size_t m = 6 * strlen(marker); /* the longest form's length */

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' ||
		    strstr(line, "[vvar") || strstr(line, "[vsyscall]"))
			continue;
		for (unsigned long at = lo; at < hi && !hit;) {
			size_t want = hi - at > CHUNK ? CHUNK : hi - at;
			char *buf = malloc(want + m);
			ssize_t n =
			    buf ? pread(mem, buf, want + m > hi - at ? want : want + m, (off_t)at)
				: -1;

			if (n > 0) {
				any = true;
				r->bytes += (uint64_t)n;
				hit = scan_has(buf, (size_t)n, marker);
			}
			free(buf);
			if (n <= 0)
				break;
			at += want;
		}
	}
	if (hit) {
		r->places++;
		note(r, "/proc/%ld/mem", (long)pid);
	} else if (!any) {
		r->unread++;
		note(r, "+/proc/%ld/mem (unread)", (long)pid);
	}
	if (maps)
		fclose(maps);
	if (mem >= 0)
		close(mem);
}

/* Is p paddock-init, pid 1 of its own pid namespace ("NSpid: N ... 1")?
 * (A container's pid 1 is its workload: scanned.) */
static bool sandbox_init(pid_t p)
{
	char path[64], buf[4096], *l, *end;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", p);
	n = slurp(path, buf, sizeof(buf));
	l = n > 0 ? strstr(buf, "\nNSpid:") : NULL;
	if (!l)
		return false;
	end = strchr(l + 1, '\n');
	if (end)
		*end = '\0';
	l = strrchr(l, '\t');
	if (!l || strcmp(l + 1, "1") != 0)
		return false;
	/* argv[0]: its comm is the memfd's name it was executed from. */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", p);
	return slurp(path, buf, sizeof(buf)) > 0 && strcmp(buf, "paddock-init") == 0;
}

bool scan_proc_ended(pid_t p)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", p);
	n = slurp(path, buf, sizeof(buf));
	if (n <= 0)
		return errno == ENOENT || errno == ESRCH || n == 0;
	/* "PID (COMM) S ...": the state after the last ')'. */
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' &&
	       (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

void scan_sandbox(pid_t pid, const char *marker, struct scan_result *r)
{
	struct scan_result saved;
	char path[64], ns[64], other[64];
	DIR *d = opendir("/proc");
	struct dirent *e;
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	k = readlink(path, ns, sizeof(ns) - 1);
	if (k <= 0 || !d) {
		r->unread++;
		note(r, "+/proc/%ld (no pid namespace to scan)", (long)pid);
		if (d)
			closedir(d);
		return;
	}
	ns[k] = '\0';
	while ((e = readdir(d))) {
		pid_t p = (pid_t)atoi(e->d_name);

		if (p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", p);
		k = readlink(path, other, sizeof(other) - 1);
		if (k <= 0 || (size_t)k != strlen(ns) || memcmp(other, ns, (size_t)k) != 0)
			continue;
		/* The sandbox's pid 1 is paddock-init, not the workload's: it
		 * is not dumpable, so not readable even by its owner (which is
		 * the point); counted apart. */
		if (sandbox_init(p)) {
			r->inits++;
			continue;
		}
		saved = *r;
		r->procs++;
		snprintf(path, sizeof(path), "/proc/%d/environ", p);
		scan_file(path, marker, r);
		scan_mem(p, marker, r);
		if (r->unread > saved.unread && scan_proc_ended(p)) {
			*r = saved;
			r->gone++;
		}
	}
	closedir(d);
}
