/* Landlock's user-space ABI, for headers older than the running kernel
 * (STYLE.md section 7). Debian 12's <linux/landlock.h> stops at ABI 2 and
 * its struct landlock_ruleset_attr has only handled_access_fs, so this
 * header does not include it and defines its own structs under a paddock_
 * prefix; the layouts follow include/uapi/linux/landlock.h of Linux 6.18.
 * Constants are guarded with #ifndef so a newer system header that sneaks in
 * through another include does not clash. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/types.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* Argument of landlock_create_ruleset(2). The kernel copies min(size, its
 * own size) and requires any bytes it does not know to be zero, so the full
 * struct may be passed to an older kernel as long as the newer fields are 0
 * (copy_struct_from_user(), include/linux/uaccess.h). */
struct paddock_landlock_ruleset_attr {
	__u64 handled_access_fs;  /* ABI 1 */
	__u64 handled_access_net; /* ABI 4 */
	__u64 scoped;		  /* ABI 6 */
};

/* Packed: the kernel checks that the size has no trailing padding
 * (build_check_abi(), security/landlock/syscalls.c). */
struct paddock_landlock_path_beneath_attr {
	__u64 allowed_access;
	__s32 parent_fd;
} __attribute__((packed));

struct paddock_landlock_net_port_attr {
	__u64 allowed_access;
	__u64 port; /* host byte order */
};

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* enum landlock_rule_type in the kernel's header. Its enum constants would
 * clash with these macros if <linux/landlock.h> were included after this
 * file, so its include guard is taken here; if it came first, it defined
 * the path-beneath type, and the net-port type too when it knows ABI 4. */
#ifndef _LINUX_LANDLOCK_H
#define _LINUX_LANDLOCK_H
#define LANDLOCK_RULE_PATH_BENEATH 1
#define LANDLOCK_RULE_NET_PORT	   2
#elif !defined(LANDLOCK_ACCESS_NET_BIND_TCP)
#define LANDLOCK_RULE_NET_PORT 2
#endif

/* Filesystem rights; the comment gives the first ABI that knows each. */
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE     (1ULL << 0)  /* 1 */
#define LANDLOCK_ACCESS_FS_WRITE_FILE  (1ULL << 1)  /* 1 */
#define LANDLOCK_ACCESS_FS_READ_FILE   (1ULL << 2)  /* 1 */
#define LANDLOCK_ACCESS_FS_READ_DIR    (1ULL << 3)  /* 1 */
#define LANDLOCK_ACCESS_FS_REMOVE_DIR  (1ULL << 4)  /* 1 */
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)  /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_CHAR   (1ULL << 6)  /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_DIR    (1ULL << 7)  /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_REG    (1ULL << 8)  /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_SOCK   (1ULL << 9)  /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_FIFO   (1ULL << 10) /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK  (1ULL << 11) /* 1 */
#define LANDLOCK_ACCESS_FS_MAKE_SYM    (1ULL << 12) /* 1 */
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* 5 */
#endif

/* Network rights (ABI 4). */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/* Scopes (ABI 6). */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* The rights the kernel accepts in a rule on a non-directory: anything else
 * is EINVAL (ACCESS_FILE, security/landlock/fs.c). */
#define PADDOCK_LANDLOCK_ACCESS_FILE                                  \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* landlock_create_ruleset(2): a ruleset fd, the ABI version (attr NULL,
 * size 0, flags LANDLOCK_CREATE_RULESET_VERSION), or -errno: -ENOSYS when the
 * kernel was built without Landlock, -EOPNOTSUPP when it is not enabled at
 * boot (lsm=). */
static inline int sys_landlock_create_ruleset(const struct paddock_landlock_ruleset_attr *attr,
					      size_t size, uint32_t flags)
{
	long r = syscall(__NR_landlock_create_ruleset, attr, size, flags);
	return r < 0 ? -errno : (int)r;
}

/* landlock_add_rule(2): 0 or -errno. */
static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr,
					uint32_t flags)
{
	long r = syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
	return r < 0 ? -errno : 0;
}

/* landlock_restrict_self(2): 0 or -errno. Needs no_new_privs (or
 * CAP_SYS_ADMIN in the current user namespace): -EPERM otherwise. */
static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	long r = syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
	return r < 0 ? -errno : 0;
}
