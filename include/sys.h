/* Raw syscalls glibc 2.36 does not wrap (STYLE.md section 7), and the
 * constants Debian 12's headers may lack. Never the bare kernel name: libc
 * may add a wrapper later. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct sys_clone_args {
	__aligned_u64 flags;
	__aligned_u64 pidfd;
	__aligned_u64 child_tid;
	__aligned_u64 parent_tid;
	__aligned_u64 exit_signal;
	__aligned_u64 stack;
	__aligned_u64 stack_size;
	__aligned_u64 tls;
	__aligned_u64 set_tid;
	__aligned_u64 set_tid_size;
	__aligned_u64 cgroup;
};

struct sys_open_how {
	__aligned_u64 flags;
	__aligned_u64 mode;
	__aligned_u64 resolve;
};

#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV 0x01
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT 0x10
#endif

/* clone3(2) as fork: returns 0 in the child, the pid in the parent, or
 * -errno. The child runs on a copy of the parent's stack, like fork(). */
static inline long sys_clone3(struct sys_clone_args *args)
{
	long r = syscall(__NR_clone3, args, sizeof(*args));
	return r < 0 ? -errno : r;
}

/* openat2(2): returns an fd or -errno (-ENOSYS before Linux 5.6). */
static inline int sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct sys_open_how how = {.flags = flags, .mode = 0, .resolve = resolve};
	long r = syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
	return r < 0 ? -errno : (int)r;
}

static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
	long r = syscall(__NR_pivot_root, new_root, put_old);
	return r < 0 ? -errno : 0;
}
