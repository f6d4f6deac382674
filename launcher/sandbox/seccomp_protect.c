/* The protected-path notice (docs/security.md, "Protected paths": "Why a
 * change was refused"). A rename or directory removal of a protected path
 * fails in the kernel with EBUSY (a mount point), which git shows as "could not
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
 * share it): "arch is native and nr is one of these (unlinkat with
 * AT_REMOVEDIR): notify, else go on".
 * A prefix decides before the policy's program, so only calls the policy
 * allows unconditionally are in it: the policy's deny of one of them keeps
 * it out (a "continue" must not skip a refusal). */
#include "sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

#include "../../policy/sha256.h"

/* In the default profile's unconditional allowlist (seccomp.c "allowed").
 * unlink(2) of files is not here: it is the hot one (a build, rm -r,
 * git checkout), and a protected file's unlink is rare; its EBUSY stays.
 * unlinkat(2) is sent only with AT_REMOVEDIR (rm -r's directories). */
static const char *const calls[] = {"rename", "renameat", "renameat2", "rmdir", "unlinkat"};

/* protect_git "allowlist" (docs/security.md, "The git directory as an
 * allowlist"): every call that makes, writes or removes a name git may
 * make in a git directory, which the supervisor then performs itself when
 * it lands in one. An open is sent only when it creates or writes (flags &
 * (O_CREAT | O_WRONLY | O_RDWR)); open, openat and creat have the policy's
 * mode rule (no S_ISUID or S_ISGID), so one with those bits goes on to the
 * policy's program, which refuses it; so has chmod (git sets a lock file's
 * mode by its path before renaming it). link, symlink and mknod are not
 * sent: in a git directory's read-only part the kernel refuses them
 * (EROFS), and git makes none there. openat2 is refused by the policy
 * (ENOSYS). */
struct call {
	const char *name;
	int flags_arg, mode_arg; /* -1: none */
};
static const struct call allow_calls[] = {
    {"rename", -1, -1},	  {"renameat", -1, -1}, {"renameat2", -1, -1}, {"rmdir", -1, -1},
    {"unlinkat", -1, -1}, {"unlink", -1, -1},	{"mkdir", -1, -1},     {"mkdirat", -1, -1},
    {"open", 1, 2},	  {"openat", 2, 3},	{"creat", -1, 1},      {"chmod", -1, 1},
    {"fchmodat", -1, 2},  {"fchmodat2", -1, 2},
};

#define N_CALLS	    (sizeof(allow_calls) / sizeof(allow_calls[0]))
#define PREFIX_MAX  (3 + 6 * N_CALLS + 1)
#define WRITE_FLAGS (O_CREAT | O_WRONLY | O_RDWR)

/* The low 32 bits of argument i (seccomp_data keeps each as a u64). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

static bool denied_by(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_seccomp_deny; i++)
		if (strcmp(p->seccomp_deny[i].name, name) == 0)
			return true;
	for (size_t i = 0; i < p->n_seccomp_allow; i++)
		if (strcmp(p->seccomp_allow[i].name, name) == 0)
			return true; /* the policy's own rule for it: not ours to skip */
	return false;
}

/* The prefix is written with absolute targets (an instruction's index, or
 * one of two symbolic ones), resolved once its length is known: jumps of
 * classic BPF count forward from the next instruction (8 bits for a
 * conditional one). */
#define TO_NOTIFY ((size_t)-1)
#define TO_MAIN	  ((size_t)-2)
struct insn {
	struct sock_filter f;
	size_t jt, jf;
};

static void resolve_jumps(const struct insn *in, size_t n, struct sock_filter *out)
{
	size_t notify = n, main = n + 1; /* the return, then the program */

	for (size_t i = 0; i < n; i++) {
		size_t t[2];
		const size_t which[2] = {in[i].jt, in[i].jf};

		out[i] = in[i].f;
		for (int k = 0; k < 2; k++)
			t[k] = which[k] == TO_NOTIFY ? notify
			       : which[k] == TO_MAIN ? main
						     : which[k];
		if (BPF_CLASS(in[i].f.code) != BPF_JMP)
			continue;
		if (BPF_OP(in[i].f.code) == BPF_JA)
			out[i].k = (unsigned)(t[0] - i - 1);
		else {
			out[i].jt = (unsigned char)(t[0] - i - 1);
			out[i].jf = (unsigned char)(t[1] - i - 1);
		}
	}
	out[n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
}

#define STMT(code, k)		 ((struct insn){BPF_STMT((code), (k)), 0, 0})
#define JUMP(code, k, to, other) ((struct insn){BPF_JUMP((code), (k), 0, 0), (to), (other)})

/* One call's block at pre[*n]: "nr is this one (and its flags write, its
 * mode has no set-id bit): notify", else the next block. */
static void block(struct insn *pre, size_t *n, int nr, const struct call *c, bool only_removedir)
{
	size_t k = *n, jeq,
	       len = 2 + (c->flags_arg >= 0 ? 2 : 0) + (c->mode_arg >= 0 ? 2 : 0) +
		     (only_removedir ? 2 : 0);
	size_t next = k + len;

	pre[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	jeq = k++;
	pre[jeq] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, TO_NOTIFY, next);
	if (only_removedir) {
		/* unlinkat(dfd, path, flags): only with AT_REMOVEDIR. */
		pre[jeq].jt = k;
		pre[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2));
		pre[k++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_REMOVEDIR, TO_NOTIFY, TO_MAIN);
	}
	if (c->flags_arg >= 0) {
		pre[jeq].jt = k;
		pre[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(c->flags_arg));
		pre[k] = JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, k + 1, TO_MAIN);
		k++;
	}
	if (c->mode_arg >= 0) {
		if (c->flags_arg < 0)
			pre[jeq].jt = k;
		pre[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(c->mode_arg));
		pre[k++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, S_ISUID | S_ISGID, TO_MAIN, TO_NOTIFY);
	}
	*n = k;
}

int seccomp_protect_program(struct seccomp_info *info, const struct policy *p, bool allowlist)
{
	const struct sock_filter *main_prog = info->bpf_notify ? info->bpf_notify : info->bpf;
	size_t main_len = info->bpf_notify ? info->bpf_notify_len : info->bpf_len;
	size_t n_main = main_len / sizeof(struct sock_filter), m = 0, n = 0, len;
	int nrs[N_CALLS];
	struct insn pre[PREFIX_MAX];
	struct sock_filter *out;
	unsigned char digest[SHA256_DIGEST_LEN];

	if (!info->enabled || !main_prog || !n_main || p->seccomp_profile != POLICY_SECCOMP_DEFAULT)
		return 0;
	/* A = arch; not native: the policy's program (a foreign entry such
	 * as x86's i386 one, which it refuses). Then one block per call (x32
	 * numbers have the high bit set and match none). */
	pre[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	pre[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 2, TO_MAIN);
	for (size_t i = 0; i < N_CALLS; i++) {
		const struct call *c = &allow_calls[i];
		bool notice = false;
		int nr;

		for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
			notice |= strcmp(calls[k], c->name) == 0;
		if (!allowlist && !notice)
			continue;
		nr = seccomp_syscall_resolve_name(c->name);
		if (nr < 0 || denied_by(p, c->name))
			continue;
		nrs[m++] = nr;
		block(pre, &n, nr, c, !allowlist && strcmp(c->name, "unlinkat") == 0);
	}
	if (!m)
		return 0;
	pre[n++] = (struct insn){BPF_STMT(BPF_JMP | BPF_JA, 0), TO_MAIN, TO_MAIN};
	len = n + 1 + n_main;
	if (len > BPF_MAXINSNS)
		return -E2BIG;
	out = calloc(len, sizeof(*out));
	if (!out)
		return -ENOMEM;
	resolve_jumps(pre, n, out);
	memcpy(out + n + 1, main_prog, main_len);
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
