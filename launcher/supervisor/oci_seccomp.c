/* linux.seccomp of config.json compiled with libseccomp (oci.h). The
 * program is loaded in the sandbox on top of paddock's own filter
 * (sandbox_harden()): seccomp filters stack, and the kernel takes the
 * strictest answer of all, so the container gets at most what both
 * allow. A name libseccomp does not know, an action or operator outside
 * the runtime-spec's list, or a field paddock does not apply is refused
 * by its JSON path. */
#include "oci.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../include/cleanup.h"

static void ctx_release(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

static const struct {
	const char *name;
	uint32_t action; /* SCMP_ACT_ERRNO(0) stands for "errno" */
} actions[] = {
    {"SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
    {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
    {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0)},
    {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0)},
    {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
    {"SCMP_ACT_LOG", SCMP_ACT_LOG},
};

static const struct {
	const char *name;
	enum scmp_compare op;
} ops[] = {
    {"SCMP_CMP_NE", SCMP_CMP_NE},
    {"SCMP_CMP_LT", SCMP_CMP_LT},
    {"SCMP_CMP_LE", SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SCMP_CMP_GE},
    {"SCMP_CMP_GT", SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

static int uint_of(const cJSON *it, const char *path, double max, uint64_t *out, struct err *err)
{
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0 ||
	    it->valuedouble != floor(it->valuedouble) || it->valuedouble > max)
		return err_set(err, EINVAL, "%s: must be an integer from 0 to %.0f", path, max);
	/* A double holds integers exactly up to 2^53; above, the text's
	 * digits would be rounded, so the bound is 2^53 - 1. */
	*out = (uint64_t)it->valuedouble;
	return 0;
}

/* The action named at path; errno_ret (or EPERM) for SCMP_ACT_ERRNO. */
static int action_of(const cJSON *it, const cJSON *errno_ret, const char *path, uint32_t *out,
		     struct err *err)
{
	char p[224];
	uint64_t e = EPERM;
	int r;

	if (!cJSON_IsString(it))
		return err_set(err, EINVAL, "%s: must be a string", path);
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (strcmp(actions[i].name, it->valuestring) != 0)
			continue;
		*out = actions[i].action;
		if (errno_ret) {
			oci_pathf(p, sizeof(p), "%s (its errnoRet)", path);
			if ((r = uint_of(errno_ret, p, 4095, &e, err)) < 0)
				return r;
			if (strcmp(it->valuestring, "SCMP_ACT_ERRNO") != 0 &&
			    strcmp(it->valuestring, "SCMP_ACT_TRACE") != 0)
				return err_set(err, EINVAL, "%s: errnoRet only with SCMP_ACT_ERRNO",
					       path);
		}
		if (strcmp(it->valuestring, "SCMP_ACT_ERRNO") == 0)
			*out = SCMP_ACT_ERRNO((uint16_t)e);
		else if (strcmp(it->valuestring, "SCMP_ACT_TRACE") == 0)
			*out = SCMP_ACT_TRACE((uint16_t)e);
		return 0;
	}
	return err_set(err, EINVAL, "%s: unknown action \"%s\"%s", path, it->valuestring,
		       strcmp(it->valuestring, "SCMP_ACT_NOTIFY") == 0 ? " (not supported)" : "");
}

static int one_arg(const cJSON *a, const char *path, struct scmp_arg_cmp *out, struct err *err)
{
	static const char *const keys[] = {"index", "value", "valueTwo", "op", NULL};
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(a, "op");
	uint64_t idx, v1, v2 = 0;
	char p[224];
	int r;

	if ((r = oci_json_keys(a, path, keys, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.index", path);
	if ((r = uint_of(cJSON_GetObjectItemCaseSensitive(a, "index"), p, 5, &idx, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.value", path);
	if ((r = uint_of(cJSON_GetObjectItemCaseSensitive(a, "value"), p, 9007199254740991.0, &v1,
			 err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.valueTwo", path);
	if (cJSON_GetObjectItemCaseSensitive(a, "valueTwo") &&
	    (r = uint_of(cJSON_GetObjectItemCaseSensitive(a, "valueTwo"), p, 9007199254740991.0,
			 &v2, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.op", path);
	if (!cJSON_IsString(op))
		return err_set(err, EINVAL, "%s: must be a string", p);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, op->valuestring) == 0) {
			*out = (struct scmp_arg_cmp){
			    .arg = (unsigned)idx, .op = ops[i].op, .datum_a = v1, .datum_b = v2};
			return 0;
		}
	return err_set(err, EINVAL, "%s: unknown operator \"%s\"", p, op->valuestring);
}

static int one_rule(scmp_filter_ctx ctx, const cJSON *s, const char *path, uint32_t def,
		    struct err *err)
{
	static const char *const keys[] = {"names", "action", "errnoRet", "args", "comment", NULL};
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(s, "names");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(s, "args"), *it;
	struct scmp_arg_cmp cmp[6];
	unsigned n_cmp = 0;
	uint32_t action;
	char p[224];
	size_t i = 0;
	int r;

	if ((r = oci_json_keys(s, path, keys, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.action", path);
	if ((r = action_of(cJSON_GetObjectItemCaseSensitive(s, "action"),
			   cJSON_GetObjectItemCaseSensitive(s, "errnoRet"), p, &action, err)) < 0)
		return r;
	if (args) {
		if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) > 6)
			return err_set(err, EINVAL, "%s.args: an array of at most 6", path);
		cJSON_ArrayForEach(it, args) {
			oci_pathf(p, sizeof(p), "%s.args[%u]", path, n_cmp);
			if ((r = one_arg(it, p, &cmp[n_cmp], err)) < 0)
				return r;
			n_cmp++;
		}
	}
	if (!cJSON_IsArray(names) || cJSON_GetArraySize(names) == 0)
		return err_set(err, EINVAL, "%s.names: a non-empty array of syscall names", path);
	cJSON_ArrayForEach(it, names) {
		int nr;

		oci_pathf(p, sizeof(p), "%s.names[%zu]", path, i++);
		if (!cJSON_IsString(it))
			return err_set(err, EINVAL, "%s: must be a string", p);
		nr = seccomp_syscall_resolve_name(it->valuestring);
		if (nr == __NR_SCMP_ERROR)
			return err_set(err, EINVAL, "%s: unknown syscall \"%s\"", p,
				       it->valuestring);
		/* The default action again is no rule (libseccomp refuses it). */
		if (action == def)
			continue;
		r = seccomp_rule_add_array(ctx, action, nr, n_cmp, cmp);
		/* -EACCES: the name has no number on one of the architectures
		 * (libseccomp adds it where it has one); -EEXIST: a second
		 * rule of the same syscall and action. */
		if (r < 0 && r != -EEXIST)
			return err_sys(err, r, "%s: \"%s\"", p, it->valuestring);
	}
	return 0;
}

static int export_bpf(scmp_filter_ctx ctx, void **bpf, size_t *len, struct err *err)
{
	cleanup_close int fd = memfd_create("paddock-oci-seccomp", MFD_CLOEXEC);
	cleanup_free char *buf = NULL;
	off_t size;
	int r;

	if (fd < 0)
		return err_sys(err, errno, "linux.seccomp: memfd_create");
	if ((r = seccomp_export_bpf(ctx, fd)) < 0)
		return err_sys(err, r, "linux.seccomp: export the program");
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0)
		return err_set(err, EIO, "linux.seccomp: an empty program");
	if (!(buf = malloc((size_t)size)))
		return err_set(err, ENOMEM, "out of memory");
	if (pread(fd, buf, (size_t)size, 0) != (ssize_t)size)
		return err_sys(err, EIO, "linux.seccomp: read the program");
	*len = (size_t)size;
	*bpf = take_ptr(&buf);
	return 0;
}

int oci_seccomp_compile(const void *json, const char *path, void **bpf, size_t *len,
			struct err *err)
{
	static const char *const keys[] = {
	    "defaultAction", "defaultErrnoRet", "architectures",    "flags",
	    "syscalls",	     "listenerPath",	"listenerMetadata", NULL};
	__attribute__((cleanup(ctx_release))) scmp_filter_ctx ctx = NULL;
	const cJSON *sec = json, *it;
	uint32_t def;
	char p[224];
	size_t i = 0;
	int r;

	if ((r = oci_json_keys(sec, path, keys, err)) < 0)
		return r;
	if (cJSON_GetObjectItemCaseSensitive(sec, "listenerPath") ||
	    cJSON_GetObjectItemCaseSensitive(sec, "listenerMetadata"))
		return err_set(err, EINVAL, "%s.listenerPath: seccomp notify is not supported",
			       path);
	if ((it = cJSON_GetObjectItemCaseSensitive(sec, "flags")) &&
	    (!cJSON_IsArray(it) || cJSON_GetArraySize(it) > 0))
		return err_set(err, EINVAL, "%s.flags: not supported by paddock oci", path);
	oci_pathf(p, sizeof(p), "%s.defaultAction", path);
	if ((r = action_of(cJSON_GetObjectItemCaseSensitive(sec, "defaultAction"),
			   cJSON_GetObjectItemCaseSensitive(sec, "defaultErrnoRet"), p, &def,
			   err)) < 0)
		return r;
	ctx = seccomp_init(def);
	if (!ctx)
		return err_set(err, ENOMEM, "%s: seccomp_init failed", path);
	/* paddock sets no_new_privs itself, in its own step. */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
		return err_sys(err, r, "%s: seccomp attribute", path);
	if ((it = cJSON_GetObjectItemCaseSensitive(sec, "architectures"))) {
		const cJSON *a;

		if (!cJSON_IsArray(it))
			return err_set(err, EINVAL, "%s.architectures: must be an array", path);
		cJSON_ArrayForEach(a, it) {
			char name[32];
			uint32_t arch;

			oci_pathf(p, sizeof(p), "%s.architectures[%zu]", path, i++);
			if (!cJSON_IsString(a) || strncmp(a->valuestring, "SCMP_ARCH_", 10) != 0 ||
			    strlen(a->valuestring) >= sizeof(name) + 10)
				return err_set(err, EINVAL, "%s: an SCMP_ARCH_ name", p);
			snprintf(name, sizeof(name), "%s", a->valuestring + 10);
			for (char *q = name; *q; q++)
				*q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
			arch = seccomp_arch_resolve_name(name);
			if (!arch)
				return err_set(err, EINVAL, "%s: unknown architecture \"%s\"", p,
					       a->valuestring);
			r = seccomp_arch_add(ctx, arch);
			if (r < 0 && r != -EEXIST)
				return err_sys(err, r, "%s", p);
		}
	}
	i = 0;
	if ((it = cJSON_GetObjectItemCaseSensitive(sec, "syscalls"))) {
		const cJSON *s;

		if (!cJSON_IsArray(it))
			return err_set(err, EINVAL, "%s.syscalls: must be an array", path);
		cJSON_ArrayForEach(s, it) {
			oci_pathf(p, sizeof(p), "%s.syscalls[%zu]", path, i++);
			if ((r = one_rule(ctx, s, p, def, err)) < 0)
				return r;
		}
	}
	return export_bpf(ctx, bpf, len, err);
}
