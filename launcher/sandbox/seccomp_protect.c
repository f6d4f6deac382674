/* The protected-path notice (docs/security.md, "Protected paths": "Why a
 * change was refused"). A rename, unlink or rmdir of a protected path fails
 * in the kernel with EBUSY (a mount point), which git shows as "could not
 * write config file .git/config: Device or resource busy". So that the
 * workload's user learns why, these calls are sent to the supervisor as a
 * seccomp user notification first: it answers a call on a protected path
 * itself (an errno and one line naming the path), and lets every other one
 * go on to the kernel, which still enforces the mount. The notice is only a
 * message: a workload that races the supervisor's read of the path meets
 * the kernel's EBUSY instead, never a write.
 *
 * The program is a prefix in front of the policy's own (the listener is
 * one per filter chain, seccomp(2) EBUSY, so --trace-denials and this
 * share it): "arch is native and nr is one of these: notify, else go on".
 * A prefix decides before the policy's program, so only calls the policy
 * allows unconditionally are in it: the policy's deny of one of them keeps
 * it out (a "continue" must not skip a refusal). */
#include "sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#include "../../policy/sha256.h"

/* In the default profile's unconditional allowlist (seccomp.c "allowed"). */
static const char *const calls[] = {"rename", "renameat", "renameat2",
				    "unlink", "unlinkat", "rmdir"};

#define N_CALLS (sizeof(calls) / sizeof(calls[0]))

static bool denied_by(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_seccomp_deny; i++)
		if (strcmp(p->seccomp_deny[i].name, name) == 0)
			return true;
	return false;
}

int seccomp_protect_program(struct seccomp_info *info, const struct policy *p)
{
	const struct sock_filter *main_prog = info->bpf_notify ? info->bpf_notify : info->bpf;
	size_t main_len = info->bpf_notify ? info->bpf_notify_len : info->bpf_len;
	size_t n_main = main_len / sizeof(struct sock_filter), m = 0, len;
	int nrs[N_CALLS];
	struct sock_filter *out;
	unsigned char digest[SHA256_DIGEST_LEN];

	if (!info->enabled || !main_prog || !n_main || p->seccomp_profile != POLICY_SECCOMP_DEFAULT)
		return 0;
	for (size_t i = 0; i < N_CALLS; i++) {
		int nr = seccomp_syscall_resolve_name(calls[i]);

		if (nr >= 0 && !denied_by(p, calls[i]))
			nrs[m++] = nr;
	}
	if (!m)
		return 0;
	len = m + 5 + n_main;
	if (len > BPF_MAXINSNS)
		return -E2BIG;
	out = calloc(len, sizeof(*out));
	if (!out)
		return -ENOMEM;
	/* 0: A = arch; 1: not native -> main; 2: A = nr; 3..3+m-1: nr_j ->
	 * notify; 3+m: -> main; 4+m: notify; 5+m: the policy's program.
	 * Jumps count from the next instruction. A foreign arch (x86's
	 * i386 entry) and x32 numbers (high bit set: no equality here)
	 * go to the policy's program, which refuses them. */
	out[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	out[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0,
					      (unsigned char)(m + 3));
	out[2] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (size_t j = 0; j < m; j++)
		out[3 + j] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[j], (unsigned char)(m - j), 0);
	out[3 + m] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 1);
	out[4 + m] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	memcpy(out + 5 + m, main_prog, main_len);
	free(info->bpf_notify);
	info->bpf_notify = out;
	info->bpf_notify_len = len * sizeof(*out);
	memcpy(info->protect_nrs, nrs, m * sizeof(*nrs));
	info->n_protect_nrs = m;
	sha256(out, info->bpf_notify_len, digest);
	sha256_hex(digest, info->bpf_notify_sha256);
	return 0;
}

bool seccomp_protect_call(const struct seccomp_info *info, int nr)
{
	for (size_t i = 0; i < info->n_protect_nrs; i++)
		if (info->protect_nrs[i] == nr)
			return true;
	return false;
}
