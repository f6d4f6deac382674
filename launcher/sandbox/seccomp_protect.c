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

#include "../../policy/sha256.h"

/* In the default profile's unconditional allowlist (seccomp.c "allowed").
 * unlink(2) of files is not here: it is the hot one (a build, rm -r,
 * git checkout), and a protected file's unlink is rare; its EBUSY stays.
 * unlinkat(2) is sent only with AT_REMOVEDIR (rm -r's directories). */
static const char *const calls[] = {"rename", "renameat", "renameat2", "rmdir", "unlinkat"};

#define N_CALLS	   (sizeof(calls) / sizeof(calls[0]))
#define PREFIX_MAX (3 + N_CALLS + 3 + 1)

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
	return false;
}

/* The prefix is written with two symbolic targets, resolved once its
 * length is known: jumps of classic BPF count forward from the next
 * instruction (8 bits for a conditional one). */
enum {
	TO_NEXT,
	TO_NOTIFY,
	TO_MAIN
};
struct insn {
	struct sock_filter f;
	unsigned char jt, jf; /* TO_* */
};

static void resolve_jumps(const struct insn *in, size_t n, struct sock_filter *out)
{
	size_t notify = n, main = n + 1; /* the return, then the program */

	for (size_t i = 0; i < n; i++) {
		size_t t[2];
		const unsigned char which[2] = {in[i].jt, in[i].jf};

		out[i] = in[i].f;
		for (int k = 0; k < 2; k++)
			t[k] = which[k] == TO_NOTIFY ? notify : which[k] == TO_MAIN ? main : i + 1;
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

int seccomp_protect_program(struct seccomp_info *info, const struct policy *p)
{
	const struct sock_filter *main_prog = info->bpf_notify ? info->bpf_notify : info->bpf;
	size_t main_len = info->bpf_notify ? info->bpf_notify_len : info->bpf_len;
	size_t n_main = main_len / sizeof(struct sock_filter), m = 0, n = 0, len;
	int nrs[N_CALLS], unlinkat_nr = -1;
	struct insn pre[PREFIX_MAX];
	struct sock_filter *out;
	unsigned char digest[SHA256_DIGEST_LEN];

	if (!info->enabled || !main_prog || !n_main || p->seccomp_profile != POLICY_SECCOMP_DEFAULT)
		return 0;
	for (size_t i = 0; i < N_CALLS; i++) {
		int nr = seccomp_syscall_resolve_name(calls[i]);

		if (nr < 0 || denied_by(p, calls[i]))
			continue;
		nrs[m++] = nr;
		if (strcmp(calls[i], "unlinkat") == 0)
			unlinkat_nr = nr;
	}
	if (!m)
		return 0;
	/* A = arch; not native: the policy's program (a foreign entry such
	 * as x86's i386 one, which it refuses). A = nr; one of ours:
	 * notify (x32 numbers have the high bit set and match none). */
	pre[n++] = (struct insn){
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), 0, 0};
	pre[n++] = (struct insn){BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0, 0),
				 TO_NEXT, TO_MAIN};
	pre[n++] = (struct insn){
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), 0, 0};
	for (size_t j = 0; j < m; j++)
		if (nrs[j] != unlinkat_nr)
			pre[n++] = (struct insn){
			    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[j], 0, 0), TO_NOTIFY,
			    TO_NEXT};
	if (unlinkat_nr >= 0) {
		/* unlinkat(dfd, path, flags): only with AT_REMOVEDIR. */
		pre[n++] =
		    (struct insn){BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)unlinkat_nr, 0, 0),
				  TO_NEXT, TO_MAIN};
		pre[n++] = (struct insn){BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)), 0, 0};
		pre[n++] = (struct insn){BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_REMOVEDIR, 0, 0),
					 TO_NOTIFY, TO_MAIN};
	} else {
		pre[n++] = (struct insn){BPF_STMT(BPF_JMP | BPF_JA, 0), TO_MAIN, TO_MAIN};
	}
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
