/* Using the embedded default profile (see seccomp_default.h). Linked into
 * paddock only, not into libpaddock.a, which the generator itself uses. */
#include "seccomp_default.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool seccomp_default_applies(const struct policy *p)
{
	return p->seccomp_profile == POLICY_SECCOMP_DEFAULT &&
	       p->seccomp_default_action == POLICY_SECCOMP_ERRNO && p->seccomp_errno == EPERM &&
	       p->n_seccomp_allow == 0 && p->n_seccomp_deny == 0;
}

int seccomp_default_info(struct seccomp_info *info)
{
	struct seccomp_info d = {0};

	d.bpf = malloc(paddock_default_bpf_len);
	d.denied = calloc(paddock_default_n_denied + 1, sizeof(*d.denied));
	if (!d.bpf || !d.denied)
		goto oom;
	memcpy(d.bpf, paddock_default_bpf, paddock_default_bpf_len);
	d.bpf_len = paddock_default_bpf_len;
	for (size_t i = 0; i < paddock_default_n_denied; i++) {
		d.denied[i] = strdup(paddock_default_denied[i]);
		if (!d.denied[i])
			goto oom;
		d.n_denied++;
	}
	memcpy(d.bpf_sha256, paddock_default_bpf_sha256, sizeof(d.bpf_sha256));
	d.n_allowed = paddock_default_allowed;
	d.n_rules = paddock_default_rules;
	d.enabled = true;
	*info = d;
	return 0;
oom:
	seccomp_info_free(&d);
	return -ENOMEM;
}
