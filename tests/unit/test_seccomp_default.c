/* The embedded default seccomp program must be exactly what seccomp_build()
 * makes for every policy that seccomp_default_applies() accepts, and the
 * launcher must never take it for a policy that asks for anything else. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../../launcher/sandbox/seccomp_default.h"
#include "unit.h"

TestSuite(seccomp_default, .fini = unit_leak_check);

static struct policy *load(const char *json)
{
	const struct policy_vars vars = {.workspace = "/ws", .home = "/h", .pwd = "/p"};
	struct policy *p = NULL;
	struct err err = {0};

	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s: %s", json,
		     err.msg);
	return p;
}

static const char *const plain[] = {
    "{\"version\":1}",
    "{\"version\":1,\"seccomp\":{\"profile\":\"default\"}}",
    "{\"version\":1,\"seccomp\":{\"default_action\":\"errno\",\"errno\":\"EPERM\"}}",
};

Test(seccomp_default, embedded_program_matches_a_fresh_build)
{
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		struct policy *p = load(plain[i]);
		struct seccomp_info built = {0}, embedded = {0};
		scmp_filter_ctx ctx = NULL;
		struct err err = {0};

		cr_assert(seccomp_default_applies(p), "%s", plain[i]);
		cr_assert_eq(seccomp_build(p, &ctx, &built, &err), 0, "%s", err.msg);
		seccomp_release(ctx);
		cr_assert_eq(seccomp_default_info(&embedded), 0);
		cr_assert_eq(embedded.bpf_len, built.bpf_len);
		cr_assert_eq(memcmp(embedded.bpf, built.bpf, built.bpf_len), 0,
			     "the embedded program differs from a build of %s", plain[i]);
		cr_assert_str_eq(embedded.bpf_sha256, built.bpf_sha256);
		cr_assert_eq(embedded.n_allowed, built.n_allowed);
		cr_assert_eq(embedded.n_rules, built.n_rules);
		cr_assert_eq(embedded.n_denied, built.n_denied);
		for (size_t k = 0; k < built.n_denied; k++)
			cr_assert_str_eq(embedded.denied[k], built.denied[k]);
		seccomp_info_free(&built);
		seccomp_info_free(&embedded);
		policy_free(p);
	}
}

Test(seccomp_default, anything_else_is_built)
{
	static const char *const other[] = {
	    "{\"version\":1,\"seccomp\":{\"allow\":[\"ptrace\"]}}",
	    "{\"version\":1,\"seccomp\":{\"deny\":[\"uname\"]}}",
	    "{\"version\":1,\"seccomp\":{\"default_action\":\"kill\"}}",
	    "{\"version\":1,\"seccomp\":{\"errno\":\"EACCES\"}}",
	    "{\"version\":1,\"seccomp\":{\"profile\":\"none\"}}",
	};

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		struct policy *p = load(other[i]);

		cr_assert_not(seccomp_default_applies(p), "%s", other[i]);
		policy_free(p);
	}
}
