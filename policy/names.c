/* Names of the policy's enum values, as written in the JSON and in records. */
#include "policy.h"

#include <errno.h>
#include <string.h>

#include "parse.h"

const char *policy_mount_type_name(enum policy_mount_type t)
{
	switch (t) {
	case POLICY_MOUNT_BIND:
		return "bind";
	case POLICY_MOUNT_TMPFS:
		return "tmpfs";
	case POLICY_MOUNT_PROC:
		return "proc";
	case POLICY_MOUNT_DEV:
		return "dev";
	case POLICY_MOUNT_DIR:
		return "dir";
	case POLICY_MOUNT_SYMLINK:
		return "symlink";
	}
	return "unknown";
}

const char *policy_rlimit_name(enum policy_rlimit r)
{
	switch (r) {
	case POLICY_RLIMIT_NPROC:
		return "nproc";
	case POLICY_RLIMIT_NOFILE:
		return "nofile";
	case POLICY_RLIMIT_FSIZE:
		return "fsize";
	case POLICY_RLIMIT_AS:
		return "as";
	case POLICY_RLIMIT_CORE:
		return "core";
	case POLICY_RLIMIT_COUNT:
		break;
	}
	return "unknown";
}

const char *policy_ns_name(unsigned bit)
{
	switch (bit) {
	case POLICY_NS_USER:
		return "user";
	case POLICY_NS_MOUNT:
		return "mount";
	case POLICY_NS_PID:
		return "pid";
	case POLICY_NS_NET:
		return "net";
	case POLICY_NS_IPC:
		return "ipc";
	case POLICY_NS_UTS:
		return "uts";
	case POLICY_NS_CGROUP:
		return "cgroup";
	}
	return "unknown";
}

/* The errno names a policy may use in "seccomp": the usual answers for a
 * refused call. EOPNOTSUPP and ENOTSUP are the same number on Linux; the
 * first name in the table is the one printed. */
static const struct {
	const char *name;
	int value;
} errnos[] = {
    {"EPERM", EPERM},
    {"EACCES", EACCES},
    {"ENOSYS", ENOSYS},
    {"EINVAL", EINVAL},
    {"ENOENT", ENOENT},
    {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"EOPNOTSUPP", EOPNOTSUPP},
    {"ENOTSUP", ENOTSUP},
    {"EROFS", EROFS},
    {"EFAULT", EFAULT},
    {"EBADF", EBADF},
    {"EAGAIN", EAGAIN},
    {"ENOMEM", ENOMEM},
    {"EBUSY", EBUSY},
    {"EEXIST", EEXIST},
    {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR},
    {"ENOTTY", ENOTTY},
    {"ESRCH", ESRCH},
    {"ECHILD", ECHILD},
    {"EIO", EIO},
    {"ENXIO", ENXIO},
    {"E2BIG", E2BIG},
    {"ENOEXEC", ENOEXEC},
    {"ENFILE", ENFILE},
    {"EMFILE", EMFILE},
    {"ETXTBSY", ETXTBSY},
    {"EFBIG", EFBIG},
    {"ENOSPC", ENOSPC},
    {"ESPIPE", ESPIPE},
    {"EMLINK", EMLINK},
    {"EPIPE", EPIPE},
    {"EDOM", EDOM},
    {"ERANGE", ERANGE},
    {"ENOTSOCK", ENOTSOCK},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT},
    {"ECONNREFUSED", ECONNREFUSED},
    {"ENETUNREACH", ENETUNREACH},
    {"EHOSTUNREACH", EHOSTUNREACH},
};

const char *policy_errno_name(int e)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].value == e)
			return errnos[i].name;
	return "E?";
}

int policy_errno_value(const char *name)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(errnos[i].name, name) == 0)
			return errnos[i].value;
	return 0;
}
