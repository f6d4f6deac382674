/* supervisor/oci.c: an OCI bundle's config.json (runtime-spec 1.0/1.1)
 * translated into a paddock policy (docs/oci.md). Pure but for the seccomp
 * program's export (a memfd): bytes in, a struct oci_config out.
 *
 * Every field is either honoured, narrowed (paddock gives less than was
 * asked: capabilities, devices, sysfs; each says so in notes), or refused
 * with an error naming its JSON path ("linux.namespaces[2].type: unknown
 * namespace type \"foo\""). Nothing is ignored. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/err.h"

#define OCI_CONFIG_MAX_BYTES (4u << 20)
#define OCI_NOTES_MAX	     64

enum oci_hook_kind {
	OCI_HOOK_PRESTART,
	OCI_HOOK_CREATE_RUNTIME,
	OCI_HOOK_POSTSTART,
	OCI_HOOK_POSTSTOP,
	OCI_HOOK_KINDS,
};

struct oci_hook {
	char *path;
	char **args;   /* NULL-terminated; args[0] given or path */
	char **env;    /* NULL-terminated */
	int timeout_s; /* 0: none */
};

/* An entry of the rootfs' top directory, as the caller lists it. */
enum oci_entry_kind {
	OCI_ENTRY_DIR,
	OCI_ENTRY_FILE,
	OCI_ENTRY_SYMLINK,
};
struct oci_entry {
	const char *name;
	enum oci_entry_kind kind;
	const char *link; /* OCI_ENTRY_SYMLINK: its text */
};

/* linux.namespaces[index] with a path: a namespace joined instead of made
 * (net, ipc, uts, cgroup only). fd and ino are set by the caller
 * (oci_join_open()), -1 and 0 until then. */
#define OCI_JOIN_MAX 4
struct oci_join {
	int nstype;	  /* CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP */
	const char *type; /* the runtime-spec name: "network", ... */
	size_t index;	  /* in linux.namespaces, for messages */
	char *path;
	int fd;
	unsigned long ino;
};

struct oci_config {
	char **argv; /* process.args, NULL-terminated */
	size_t argc;
	bool terminal;
	unsigned rows, cols; /* process.consoleSize, 0: not given */
	char *root;	     /* root.path, made absolute against the bundle */
	bool root_readonly;  /* root.readonly */
	/* Set by the caller before oci_config_policy(): the rootfs cannot be
	 * bound writable (a root caller's unprivileged workload needs an
	 * idmapped mount, which overlayfs does not allow): read-only, with a
	 * tmpfs on /tmp, and a note. */
	bool root_force_ro;
	/* Set by the caller before oci_config_policy(): where the binds'
	 * sources find the rootfs (a bind of it the sandbox's uid can reach),
	 * NULL: root itself. */
	char *root_view;
	bool has_umask; /* process.user.umask: set by the monitor, inherited */
	unsigned umask;
	bool has_oom;
	int oom_score_adj;
	char **sysctl; /* "net.ipv4.x=VALUE", for the network namespace */
	size_t n_sysctl;
	struct oci_hook *hooks[OCI_HOOK_KINDS];
	size_t n_hooks[OCI_HOOK_KINDS];
	void *bpf; /* linux.seccomp compiled (struct sock_filter[]), or NULL */
	size_t bpf_len;
	char *policy_ref; /* annotation org.paddock.policy, or NULL */
	char *ttl;	  /* annotation org.paddock.ttl, or NULL */
	/* annotation org.paddock.weaken (knob names, ',' or '+' between),
	 * or NULL; weaken: the WEAKEN_* bits, set by the caller from it */
	char *weaken_names;
	uint64_t weaken;
	char *annotations;	    /* the config's annotations as a JSON object text */
	void *policy;		    /* the policy being built (a cJSON object) */
	char *policy_json;	    /* oci_config_policy(): the paddock policy text */
	char config_sha256[65];	    /* of config.json's bytes: what was requested */
	char policy_sha256[65];	    /* of policy_json: what paddock was given */
	char *notes[OCI_NOTES_MAX]; /* what was asked and what paddock gives instead */
	size_t n_notes;
	struct oci_join join[OCI_JOIN_MAX];
	size_t n_join;
	/* linux.maskedPaths, readonlyPaths below /proc (the /sys ones: /sys
	 * is an empty directory), NULL-terminated or NULL. */
	char **proc_masked, **proc_readonly;
	size_t n_proc_masked, n_proc_readonly;
};

/* Parse and check config.json (len bytes) of the bundle at bundle (an
 * absolute path). 0, or -EINVAL/-E2BIG/-ENOMEM with err naming the JSON
 * path. On failure out is freed. */
int oci_config_parse(const char *text, size_t len, const char *bundle, struct oci_config *out,
		     struct err *err);
/* The policy text (out->policy_json) once the rootfs' top entries are
 * known: each becomes a bind (or a symlink) below paddock's own root,
 * unless a mount of config.json covers it. extra: the JSON text of an
 * org.paddock.policy file (its "network" and "protect" taken), or NULL.
 * 0, or -EINVAL/-ENOMEM with err. */
int oci_config_policy(struct oci_config *c, const struct oci_entry *entries, size_t n,
		      const char *extra, size_t extra_len, struct err *err);
void oci_config_free(struct oci_config *c);
/* Open each joined namespace's path (c->join[].fd, .ino) and check it is a
 * namespace of the type asked: 0, or -EINVAL/-errno with err naming the
 * JSON path ("linux.namespaces[1].path: /x is not a network namespace"). */
int oci_join_open(struct oci_config *c, struct err *err);

/* What oci.c and oci_seccomp.c share: every member of the JSON object
 * json (a cJSON *) is one of known (NULL-terminated), at most once; else
 * -EINVAL with err naming PATH.KEY. oci_pathf(): a JSON path for a
 * message, cut when too long (it is only shown). */
int oci_json_keys(const void *json, const char *path, const char *const *known, struct err *err);
__attribute__((format(printf, 3, 4))) void oci_pathf(char *out, size_t size, const char *fmt, ...);

/* oci_seccomp.c: a runtime-spec seccomp object (a cJSON *) compiled with
 * libseccomp into a BPF program (malloc'd into *bpf, *len bytes). path
 * names the object in errors ("linux.seccomp"). */
int oci_seccomp_compile(const void *json, const char *path, void **bpf, size_t *len,
			struct err *err);
