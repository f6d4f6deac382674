/* Names of the policy's enum values, as written in the JSON and in records. */
#include "policy.h"

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
