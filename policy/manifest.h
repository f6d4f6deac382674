/* Plugin manifests (docs/trust.md, "Plugins"; HB-22): what a plugin
 * declares it is and may do, reviewed as a capability diff against the
 * approved one. A JSON file
 *
 *   {"version": 1, "name": NAME,
 *    "artifact": {"path": "plugin.sh", "sha256": HEX},
 *    "signer": {"issuer": "...", "identity": "..."},        (optional)
 *    "files": [{"path": "notes", "mode": "ro"|"rw"}, ...],  (workspace-relative)
 *    "network": ["HOST:PORT", ...],                          (as --allow-net)
 *    "tools": [{"name": N, "description": "...", "schema": {...}}, ...]}
 *
 * A tool's digest is computed here (SHA-256 of its definition written
 * back compactly), never taken from the file. Pure; fuzzed
 * (tests/fuzz/fuzz_policy.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/err.h"

#define MANIFEST_MAX_BYTES (64 * 1024)
#define MANIFEST_ITEMS_MAX 64
#define MANIFEST_NAME_MAX  64
#define MANIFEST_TEXT_MAX  1024

struct manifest_file {
	char *path; /* relative, no "..", "." the workspace itself */
	bool rw;
};

struct manifest_net {
	char *host;
	uint16_t port;
};

struct manifest_tool {
	char *name;
	char *description;
	char sha256[65]; /* of the definition {name, description, schema} */
};

struct manifest {
	char *name; /* [A-Za-z0-9_.-], 1 to 64, not starting with '.' */
	char *artifact;
	char artifact_sha256[65];
	char *signer_issuer, *signer_identity; /* both NULL: unsigned */
	struct manifest_file *files;
	size_t n_files;
	struct manifest_net *net;
	size_t n_net;
	struct manifest_tool *tools;
	size_t n_tools;
	char sha256[65]; /* of the manifest's bytes */
};

/* Parse a manifest: -EINVAL with err "<json path>: ...", -E2BIG, -ENOMEM. */
int manifest_parse(const char *text, size_t len, struct manifest **out, struct err *err);
void manifest_free(struct manifest *m);

/* One difference between an approved manifest and an update. */
enum manifest_change_kind {
	MANIFEST_WIDENS,  /* new authority: held until approved */
	MANIFEST_NARROWS, /* authority given up */
	MANIFEST_CHANGED, /* no authority by itself (artifact, signer): shown */
};
struct manifest_change {
	enum manifest_change_kind kind;
	char text[256];
};
#define MANIFEST_CHANGES_MAX 200

/* The capability diff of update against approved, in a fixed order
 * (artifact, signer, files, network, tools); returns the number of
 * changes written (at most max). A file scope added or made rw, an
 * endpoint added, a tool added or its definition changed widen; one tool
 * removed and one added in the same update are also flagged as a possible
 * rename. Pure. */
size_t manifest_diff(const struct manifest *approved, const struct manifest *update,
		     struct manifest_change *out, size_t max);
bool manifest_widens(const struct manifest_change *c, size_t n);
/* Does approved grant tool t of an update (same name, same digest)? */
bool manifest_tool_approved(const struct manifest *approved, const struct manifest_tool *t);
