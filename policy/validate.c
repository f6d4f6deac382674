/* The meaning of a policy: variables, paths, names, the order of mounts and
 * the rules that tie fields together. Messages follow docs/policy.md. */
#include "validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"
#include "json.h"
#include "parse.h"

/* PATH_MAX: the kernel refuses a path of this many bytes with its NUL. */
#define PATH_LIMIT 4096
/* MAX_ARG_STRLEN: execve(2) refuses a longer "NAME=value" string (E2BIG). */
#define ENV_LIMIT (32 * 4096)

/* The value of ${name} (n bytes); false when the name is unknown. *val is
 * NULL for a known variable the caller did not set. */
static bool lookup(const char *name, size_t n, const struct policy_vars *vars, const char **val)
{
	static const struct policy_vars none = {0};
	const struct policy_vars *v = vars ? vars : &none;

	if (n == 9 && memcmp(name, "WORKSPACE", 9) == 0)
		*val = v->workspace;
	else if (n == 4 && memcmp(name, "HOME", 4) == 0)
		*val = v->home;
	else if (n == 3 && memcmp(name, "PWD", 3) == 0)
		*val = v->pwd;
	else
		return false;
	return true;
}

/* One pass of the expansion of in: with dst NULL it only measures (and
 * finds every error), otherwise it writes. A "$" not followed by "{" is
 * literal; there is no escape for "${". */
static int expand_pass(const char *in, const struct policy_vars *vars, const char *path, char *dst,
		       size_t *out_len, struct err *err)
{
	const char *s = in, *end, *val;
	size_t n = 0, vlen;

	while (*s) {
		if (s[0] != '$' || s[1] != '{') {
			if (dst)
				dst[n] = *s;
			n++;
			s++;
			continue;
		}
		end = strchr(s + 2, '}');
		if (!end)
			return err_set(err, EINVAL, "%s: unknown variable %s", path, QUOTE(s));
		if (!lookup(s + 2, (size_t)(end - s - 2), vars, &val))
			return err_set(err, EINVAL, "%s: unknown variable %s", path,
				       QUOTE_N(s, (size_t)(end - s + 1)));
		if (!val)
			return err_set(err, EINVAL, "%s: %.*s is not set", path, (int)(end - s + 1),
				       s);
		vlen = strlen(val);
		if (dst)
			memcpy(dst + n, val, vlen);
		n += vlen;
		s = end + 1;
	}
	if (dst)
		dst[n] = '\0';
	*out_len = n;
	return 0;
}

/* Replace *s with its expansion, which must be shorter than limit bytes. */
static int expand(char **s, const struct policy_vars *vars, size_t limit, const char *path,
		  struct err *err)
{
	cleanup_free char *out = NULL;
	size_t len;
	int r;

	r = expand_pass(*s, vars, path, NULL, &len, err);
	if (r < 0)
		return r;
	if (len >= limit)
		return err_set(err, EINVAL, "%s: is longer than %zu bytes", path, limit - 1);
	out = malloc(len + 1);
	if (!out)
		return err_set(err, ENOMEM, "out of memory");
	r = expand_pass(*s, vars, path, out, &len, err);
	if (r < 0)
		return r;
	free(*s);
	*s = take_ptr(&out);
	return 0;
}

/* An absolute path in normal form, so that prefix comparisons mean what
 * they seem to and no component can climb out ("..") of where it is put.
 * "/" itself only where root_ok. */
static int check_path(const char *s, const char *path, bool root_ok, struct err *err)
{
	const char *c, *e;

	if (s[0] != '/')
		return err_set(err, EINVAL, "%s: must be an absolute path", path);
	if (strlen(s) >= PATH_LIMIT)
		return err_set(err, EINVAL, "%s: is longer than %d bytes", path, PATH_LIMIT - 1);
	if (s[1] == '\0')
		return root_ok ? 0 : err_set(err, EINVAL, "%s: must not be \"/\"", path);
	for (c = s + 1;; c = e + 1) {
		e = c + strcspn(c, "/");
		if (e == c && *e)
			return err_set(err, EINVAL,
				       "%s: must not contain empty components (\"//\")", path);
		if (e == c)
			return err_set(err, EINVAL, "%s: must not end with \"/\"", path);
		if (e - c == 1 && c[0] == '.')
			return err_set(err, EINVAL, "%s: must not contain \".\"", path);
		if (e - c == 2 && c[0] == '.' && c[1] == '.')
			return err_set(err, EINVAL, "%s: must not contain \"..\"", path);
		if (!*e)
			return 0;
	}
}

static int expand_path(char **s, const struct policy_vars *vars, const char *path, bool root_ok,
		       struct err *err)
{
	int r = expand(s, vars, PATH_LIMIT, path, err);

	return r < 0 ? r : check_path(*s, path, root_ok, err);
}

static int check_namespaces(const struct policy *p, const struct policy_parse_info *info,
			    struct err *err)
{
	static const struct {
		unsigned bit;
		const char *hint;
	} required[] = {
	    {POLICY_NS_USER, ""},
	    {POLICY_NS_MOUNT, ""},
	    {POLICY_NS_PID, " (use --weaken no-pidns to run without it)"},
	    {POLICY_NS_NET, " (use --weaken host-net to run without it)"},
	};

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!(p->namespaces & required[i].bit))
			return err_set(err, EINVAL, "namespaces: \"%s\" is required%s",
				       policy_ns_name(required[i].bit), required[i].hint);
	/* Without its own UTS namespace sethostname() would rename the host. */
	if (info->hostname_set && !(p->namespaces & POLICY_NS_UTS))
		return err_set(err, EINVAL, "hostname: needs the \"uts\" namespace");
	return 0;
}

/* 1 to 64 (HOST_NAME_MAX) letters, digits, '-' and '.', not starting with
 * '-' (it would read as an option to hostname(1)) or '.'. */
static int check_hostname(const char *h, struct err *err)
{
	size_t len = strlen(h);

	if (len >= 1 && len <= 64 && h[0] != '-' && h[0] != '.' &&
	    strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == len)
		return 0;
	return err_set(err, EINVAL,
		       "hostname: invalid hostname %s (1 to 64 letters, digits, '-' or '.', not "
		       "starting with '-' or '.')",
		       QUOTE(h));
}

static int check_env(struct policy *p, const struct policy_vars *vars, struct err *err)
{
	char path[JPATH_MAX];
	int r;

	for (size_t i = 0; i < p->n_env_set; i++) {
		/* Stored as "NAME=value"; NAME has no '$', so expanding the
		 * whole string expands the value. */
		snprintf(path, sizeof(path), "environment.set.%.*s",
			 (int)strcspn(p->env_set[i], "="), p->env_set[i]);
		r = expand(&p->env_set[i], vars, ENV_LIMIT, path, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Does s name a known variable that is not set (a HOME that does not
 * exist)? */
static bool names_unset(const char *s, const struct policy_vars *vars)
{
	const char *val;

	for (; (s = strstr(s, "${")); s += 2) {
		const char *end = strchr(s + 2, '}');

		if (end && lookup(s + 2, (size_t)(end - s - 2), vars, &val) && !val)
			return true;
	}
	return false;
}

/* An optional bind with no source to bind: gone from the policy (its
 * index stays what error messages say). */
static void drop_mount(struct policy *p, size_t i)
{
	struct policy_mount *m = &p->mounts[i];

	free(m->source);
	free(m->target);
	free(m->link);
	memmove(m, m + 1, (p->n_mounts - i - 1) * sizeof(*m));
	p->n_mounts--;
}

static int check_mount_paths(struct policy *p, const struct policy_vars *vars, struct err *err)
{
	char path[JPATH_MAX];
	int r;

	for (size_t i = 0; i < p->n_mounts; i++) {
		struct policy_mount *m = &p->mounts[i];
		bool target_done = false;

		/* An optional bind whose source names an unset variable has no
		 * source: skipped, as one that is missing. */
		if (m->optional && m->source && names_unset(m->source, vars)) {
			drop_mount(p, i--);
			continue;
		}
		if (m->source) {
			snprintf(path, sizeof(path), "mounts[%zu].source", m->index);
			r = expand_path(&m->source, vars, path, false, err);
			if (r < 0)
				return r;
		}
		if (m->source && m->follow_symlink) {
			/* "follow": the caller's own symlink (a dotfile kept
			 * elsewhere) resolved here, as the caller; the mount then
			 * refuses any symlink it meets, as for every source. */
			char *real = realpath(m->source, NULL);

			if (!real && m->optional && (errno == ENOENT || errno == EACCES)) {
				drop_mount(p, i--);
				continue;
			}
			if (!real)
				return err_sys(err, errno, "%s: %s", path, m->source);
			if (!m->target) {
				m->target = m->source; /* the path as written, expanded */
				target_done = true;
			} else {
				free(m->source);
			}
			m->source = real;
		}
		snprintf(path, sizeof(path), "mounts[%zu].target", m->index);
		if (target_done) {
			r = 0;
		} else if (m->target) {
			r = expand(&m->target, vars, PATH_LIMIT, path, err);
		} else {
			m->target = strdup(m->source);
			r = m->target ? 0 : err_set(err, ENOMEM, "out of memory");
		}
		if (r < 0)
			return r;
		/* mounts/ always builds the tree on a fresh tmpfs root. */
		if (strcmp(m->target, "/") == 0)
			return err_set(
			    err, EINVAL,
			    "%s: \"/\" is always a fresh tmpfs and cannot be a mount target", path);
		r = check_path(m->target, path, false, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A path in a list sorted in tree order (see tree_cmp) with its origin. */
struct node {
	const char *t;
	size_t len;
	size_t idx; /* index in "mounts" or "protect" */
	int type;   /* enum policy_mount_type, or -1 for a protect entry */
};

/* Sort key of a path byte: '/' right after the terminating NUL, before
 * every other byte. */
static unsigned tree_key(char c)
{
	if (c == '\0')
		return 0;
	return c == '/' ? 1 : (unsigned char)c + 2u;
}

/* strcmp() with tree_key(): the paths under a directory come right after
 * it, as in a depth-first walk of the tree. (In plain strcmp() order
 * "/a-b" would fall between "/a" and "/a/x".) */
static int tree_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned x = tree_key(*a), y = tree_key(*b);

		if (x != y || x == 0)
			return (x > y) - (x < y);
	}
}

static int node_cmp(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	int c = tree_cmp(x->t, y->t);

	if (c)
		return c;
	if ((x->type < 0) != (y->type < 0))
		return x->type < 0 ? 1 : -1; /* mounts before protect entries */
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* n lies strictly under anc. */
static bool under(const struct node *anc, const struct node *n)
{
	return n->len > anc->len && memcmp(n->t, anc->t, anc->len) == 0 && n->t[anc->len] == '/';
}

static bool same(const struct node *a, const struct node *b)
{
	return a->len == b->len && memcmp(a->t, b->t, a->len) == 0;
}

enum clash_kind {
	CLASH_SAME,   /* later has the target of earlier */
	CLASH_HIDE,   /* later is an ancestor of earlier and would cover it */
	CLASH_INSIDE, /* later is under earlier, a symlink or proc */
};

struct clash {
	bool found;
	size_t later, earlier;
	enum clash_kind kind;
};

/* Keep the clash a pairwise scan in policy order would meet first. */
static void note(struct clash *c, size_t later, size_t earlier, enum clash_kind kind)
{
	if (c->found && (later > c->later || (later == c->later && earlier > c->earlier)))
		return;
	*c = (struct clash){true, later, earlier, kind};
}

static int clash_error(const struct policy *p, const struct clash *c, struct err *err)
{
	const struct policy_mount *l = &p->mounts[c->later], *e = &p->mounts[c->earlier];

	/* Their indices as written: an optional bind dropped before them
	 * (check_mount_paths) must not renumber them. */
	if (c->kind == CLASH_SAME)
		return err_set(err, EINVAL,
			       "mounts[%zu].target: %s is already the target of mounts[%zu]",
			       l->index, QUOTE(l->target), e->index);
	if (c->kind == CLASH_HIDE)
		return err_set(err, EINVAL,
			       "mounts[%zu].target: %s would hide mounts[%zu] (%s); list it first",
			       l->index, QUOTE(l->target), e->index, QUOTE(e->target));
	return err_set(err, EINVAL,
		       "mounts[%zu].target: %s is inside mounts[%zu] (%s), a %s; nothing can be "
		       "mounted there",
		       l->index, QUOTE(l->target), e->index, QUOTE(e->target),
		       e->type == POLICY_MOUNT_SYMLINK ? "symlink" : "proc mount");
}

/* Mounts are made in policy order, so a mount over an ancestor of an earlier
 * target would hide it. Nothing may go under a symlink: the kernel would
 * follow the link when mounting, possibly out of the sandbox tree. Nor
 * inside a proc mount: procfs entries are the kernel's, mounts/ cannot make
 * a mount point there. Rather than
 * compare every pair, walk the targets in tree order with a stack of the
 * current target's ancestors: O(n log n + total path depth). Of a run of
 * equal targets only the first takes part: every clash of a later one is
 * preceded by one of the first or by the duplicate itself. */
static int check_mount_order(const struct policy *p, struct err *err)
{
	cleanup_free struct node *v = NULL;
	cleanup_free size_t *stack = NULL;
	size_t n = p->n_mounts, depth = 0, first = 0;
	struct clash c = {0};

	if (n < 2)
		return 0;
	v = calloc(n, sizeof(*v));
	stack = calloc(n, sizeof(*stack));
	if (!v || !stack)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = (struct node){p->mounts[i].target, strlen(p->mounts[i].target), i,
				     (int)p->mounts[i].type};
	qsort(v, n, sizeof(*v), node_cmp);
	for (size_t k = 0; k < n; k++) {
		if (k > 0 && same(&v[first], &v[k])) {
			if (k == first + 1)
				note(&c, v[k].idx, v[first].idx, CLASH_SAME);
			continue;
		}
		first = k;
		while (depth > 0 && !under(&v[stack[depth - 1]], &v[k]))
			depth--;
		for (size_t s = 0; s < depth; s++) {
			const struct node *a = &v[stack[s]];

			if (a->idx > v[k].idx)
				note(&c, a->idx, v[k].idx, CLASH_HIDE);
			else if (a->type == POLICY_MOUNT_SYMLINK || a->type == POLICY_MOUNT_PROC)
				note(&c, v[k].idx, a->idx, CLASH_INSIDE);
		}
		stack[depth++] = k;
	}
	return c.found ? clash_error(p, &c, err) : 0;
}

/* The first protect entry (in policy order) not at or under a bind target:
 * binds and protect entries merged in tree order, with a stack of the bind
 * targets that are ancestors of the current path. */
static int protect_outside(const struct policy *p, size_t *out, struct err *err)
{
	cleanup_free struct node *v = NULL;
	cleanup_free size_t *stack = NULL;
	size_t n = 0, depth = 0;
	bool found = false;

	v = calloc(p->n_mounts + p->n_protect, sizeof(*v));
	stack = calloc(p->n_mounts + 1, sizeof(*stack));
	if (!v || !stack)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].type == POLICY_MOUNT_BIND)
			v[n++] = (struct node){p->mounts[i].target, strlen(p->mounts[i].target), i,
					       POLICY_MOUNT_BIND};
	for (size_t i = 0; i < p->n_protect; i++)
		v[n++] = (struct node){p->protect[i], strlen(p->protect[i]), i, -1};
	qsort(v, n, sizeof(*v), node_cmp);
	for (size_t k = 0; k < n; k++) {
		while (depth > 0 && !under(&v[stack[depth - 1]], &v[k]) &&
		       !same(&v[stack[depth - 1]], &v[k]))
			depth--;
		if (v[k].type >= 0)
			stack[depth++] = k;
		else if (depth == 0 && (!found || v[k].idx < *out))
			*out = v[k].idx, found = true;
	}
	return found;
}

/* "DIR/STAR-STAR/NAME": every NAME found below DIR at start (the launcher's
 * bounded walk, mounts/git.c). One such component, never the last. */
static int check_star(const char *s, const char *path, struct err *err)
{
	const char *first = strstr(s, "/**/");

	if (first && strstr(first + 3, "/**/"))
		return err_set(err, EINVAL, "%s: at most one \"**\" component", path);
	if (strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/**") == 0)
		return err_set(err, EINVAL, "%s: \"**\" must be followed by a name", path);
	return 0;
}

static int check_protect(struct policy *p, const struct policy_vars *vars, struct err *err)
{
	char path[JPATH_MAX];
	size_t later, earlier;
	int r;

	for (size_t i = 0; i < p->n_protect; i++) {
		snprintf(path, sizeof(path), "protect[%zu]", i);
		r = expand_path(&p->protect[i], vars, path, false, err);
		if (r < 0)
			return r;
		r = check_star(p->protect[i], path, err);
		if (r < 0)
			return r;
	}
	r = policy_first_dup((const char *const *)p->protect, p->n_protect, &later, &earlier);
	if (r < 0)
		return err_set(err, r, "out of memory");
	if (r > 0)
		return err_set(err, EINVAL, "protect[%zu]: duplicate path %s", later,
			       QUOTE(p->protect[later]));
	r = protect_outside(p, &later, err);
	if (r > 0)
		return err_set(err, EINVAL, "protect[%zu]: %s is not inside a bind mount", later,
			       QUOTE(p->protect[later]));
	return r;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of n rules, for policy_first_dup() and bsearch(). */
static const char **rule_names(const struct policy_syscall_rule *v, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));

	for (size_t i = 0; names && i < n; i++)
		names[i] = v[i].name;
	return names;
}

static int check_rule_dups(const struct policy_syscall_rule *v, size_t n, const char *path,
			   struct err *err)
{
	cleanup_free const char **names = rule_names(v, n);
	size_t later, earlier;
	int r;

	if (!names)
		return err_set(err, ENOMEM, "out of memory");
	r = policy_first_dup(names, n, &later, &earlier);
	if (r < 0)
		return err_set(err, r, "out of memory");
	if (r > 0)
		return err_set(err, EINVAL, "%s[%zu]: duplicate syscall %s", path, later,
			       QUOTE(names[later]));
	return 0;
}

/* A call both allowed and denied has no clear meaning; the first deny
 * entry (in policy order) that is also allowed is reported. */
static int check_allow_deny(const struct policy *p, struct err *err)
{
	cleanup_free const char **allowed = rule_names(p->seccomp_allow, p->n_seccomp_allow);

	if (!allowed)
		return err_set(err, ENOMEM, "out of memory");
	qsort(allowed, p->n_seccomp_allow, sizeof(*allowed), cmp_name);
	for (size_t i = 0; i < p->n_seccomp_deny; i++) {
		const char *name = p->seccomp_deny[i].name;

		if (p->n_seccomp_allow &&
		    bsearch(&name, allowed, p->n_seccomp_allow, sizeof(*allowed), cmp_name))
			return err_set(err, EINVAL,
				       "seccomp.deny[%zu]: %s is also in seccomp.allow", i,
				       QUOTE(name));
	}
	return 0;
}

static int check_seccomp(const struct policy *p, const struct policy_parse_info *info,
			 struct err *err)
{
	const struct {
		bool set;
		const char *key;
	} unused[] = {
	    {info->seccomp_default_action_set, "default_action"},
	    {info->seccomp_errno_set, "errno"},
	    {info->seccomp_allow_set, "allow"},
	    {info->seccomp_deny_set, "deny"},
	};
	int r;

	/* Without a filter these keys would be silently ignored, and a
	 * reader of the policy would believe they apply. */
	for (size_t i = 0; p->seccomp_profile == POLICY_SECCOMP_NONE && i < 4; i++)
		if (unused[i].set)
			return err_set(err, EINVAL,
				       "seccomp.%s: not used with \"profile\": \"none\" (there is "
				       "no filter to apply it to)",
				       unused[i].key);
	if (info->seccomp_errno_set && p->seccomp_default_action != POLICY_SECCOMP_ERRNO)
		return err_set(err, EINVAL,
			       "seccomp.errno: only used with \"default_action\": \"errno\"");
	r = check_rule_dups(p->seccomp_allow, p->n_seccomp_allow, "seccomp.allow", err);
	if (r >= 0)
		r = check_rule_dups(p->seccomp_deny, p->n_seccomp_deny, "seccomp.deny", err);
	if (r >= 0)
		r = check_allow_deny(p, err);
	return r < 0 ? r : 0;
}

static int check_ports(const uint16_t *ports, size_t n, const char *path, struct err *err)
{
	cleanup_free uint64_t *seen = calloc(65536 / 64, sizeof(*seen));

	if (!seen)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		uint16_t v = ports[i];

		if (seen[v / 64] & (1ull << (v % 64)))
			return err_set(err, EINVAL, "%s[%zu]: duplicate port %u", path, i,
				       (unsigned)v);
		seen[v / 64] |= 1ull << (v % 64);
	}
	return 0;
}

static int check_landlock(const struct policy *p, struct err *err)
{
	int r;

	r = check_ports(p->landlock_tcp_bind, p->n_landlock_tcp_bind, "landlock.tcp.bind", err);
	if (r >= 0)
		r = check_ports(p->landlock_tcp_connect, p->n_landlock_tcp_connect,
				"landlock.tcp.connect", err);
	return r;
}

/* A lease is bounded by the session's own time limit, and paddock-init
 * tells a service's processes from the rest by their session id, which it
 * reads from the sandbox's /proc. */
static int check_services(const struct policy *p, struct err *err)
{
	bool proc = false;

	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].type == POLICY_MOUNT_PROC &&
		    strcmp(p->mounts[i].target, "/proc") == 0)
			proc = true;
	for (size_t i = 0; i < p->n_services; i++) {
		const struct policy_service *sv = &p->services[i];

		if (!sv->lease_ms)
			continue;
		if (p->ttl_ms && sv->lease_ms > p->ttl_ms)
			return err_set(err, EINVAL,
				       "services[%zu].lease: longer than limits.ttl; a lease "
				       "never outlives its session",
				       i);
		if (!proc)
			return err_set(err, EINVAL,
				       "services[%zu].lease: needs a \"proc\" mount at /proc "
				       "(paddock-init finds a service's processes there)",
				       i);
	}
	return 0;
}

int policy_validate(struct policy *p, const struct policy_parse_info *info,
		    const struct policy_vars *vars, struct err *err)
{
	int r;

	r = check_namespaces(p, info, err);
	if (r >= 0)
		r = check_hostname(p->hostname, err);
	if (r >= 0)
		r = expand_path(&p->cwd, vars, "cwd", true, err);
	if (r >= 0)
		r = check_env(p, vars, err);
	if (r >= 0)
		r = check_mount_paths(p, vars, err);
	if (r >= 0)
		r = check_mount_order(p, err);
	if (r >= 0)
		r = check_protect(p, vars, err);
	if (r >= 0)
		r = check_seccomp(p, info, err);
	if (r >= 0)
		r = check_landlock(p, err);
	if (r >= 0)
		r = check_services(p, err);
	if (r >= 0 && p->net_secrets)
		r = expand_path(&p->net_secrets, vars, "network.secrets", false, err);
	if (r >= 0 && p->evidence_witness)
		r = expand_path(&p->evidence_witness, vars, "evidence.witness", false, err);
	if (r >= 0)
		r = policy_check_credentials(p, err);
	return r < 0 ? r : 0;
}
