/* libFuzzer target for paddock oci's translator (launcher/supervisor/oci.c,
 * oci_seccomp.c): an OCI bundle's config.json, which an engine writes from
 * whatever its user asked for. The whole input is the config.json; what
 * parses is made into a policy over a fixed rootfs listing, and that
 * policy must then load, or be refused with a message, like any other.
 *   clang -fsanitize=fuzzer,address,undefined ... (make fuzz FUZZ=oci)
 * Built with replay.c instead, make unit runs tests/data/oci through it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../launcher/supervisor/oci.h"
#include "../../policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct oci_entry ents[] = {
	    {"bin", OCI_ENTRY_DIR, NULL},	   {"etc", OCI_ENTRY_DIR, NULL},
	    {"lib", OCI_ENTRY_SYMLINK, "usr/lib"}, {"tmp", OCI_ENTRY_DIR, NULL},
	    {".dockerenv", OCI_ENTRY_FILE, NULL},  {"dev", OCI_ENTRY_DIR, NULL},
	};
	static const struct policy_vars vars = {.workspace = "/b", .home = "/root", .pwd = "/"};
	struct oci_config c;
	struct policy *p = NULL;
	struct err err = {0};

	if (oci_config_parse((const char *)data, size, "/b", &c, &err) < 0) {
		/* Every refusal says what: a message, never an empty one. */
		if (!err.msg[0])
			__builtin_trap();
		return 0;
	}
	if (!c.argv || !c.argv[0] || !c.root || c.root[0] != '/')
		__builtin_trap();
	c.root_force_ro = size & 1;
	if (oci_config_policy(&c, ents, sizeof(ents) / sizeof(ents[0]), NULL, 0, &err) == 0) {
		if (!c.policy_json)
			__builtin_trap();
		if (policy_load_buffer(c.policy_json, strlen(c.policy_json), &vars, &p, &err) == 0)
			policy_free(p);
		else if (!err.msg[0])
			__builtin_trap();
	}
	oci_config_free(&c);
	return 0;
}
