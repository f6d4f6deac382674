/* The caller's home in a writable bind (docs/security.md, "The caller's
 * home"). A bind whose source is $HOME or an ancestor of it would let the
 * workload change what runs at the caller's next login or next use of a
 * tool: ~/.ssh/authorized_keys, a systemd user unit, a shell rc file. A
 * run whose default workspace (the current directory) is such a place is
 * refused; given explicitly (--workspace, or a policy's own bind), the
 * places below are protected (read-only, created or not) wherever the
 * home appears in the sandbox. */
#include "run.h"

#include <stdio.h>
#include <string.h>

/* Relative to the home: what runs code at login, at a desktop session's
 * start, or when the user's own tools start, and the user's keys. */
static const char *const login_names[] = {
    ".ssh",
    ".gnupg",
    ".profile",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".pam_environment",
    ".xprofile",
    ".xsession",
    ".xsessionrc",
    ".xinitrc",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".local/share/systemd",
    ".local/share/applications",
    ".local/bin",
    "bin",
    ".gitconfig",
    ".config/git",
    ".npmrc",
    ".cargo/config.toml",
    ".vimrc",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".cursor",
};

/* path is root or lies below it (both canonical, absolute). */
static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

bool home_exposed(const struct policy *p, const char *home, const char *source)
{
	for (size_t i = 0; home && i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];

		if (m->type == POLICY_MOUNT_BIND && !m->readonly && within(home, m->source) &&
		    (!source || strcmp(m->source, source) == 0))
			return true;
	}
	return false;
}

size_t home_protects(const struct policy *p, const char *home, char (*out)[PATH_MAX], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; home && i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];
		const char *rest;

		if (m->type != POLICY_MOUNT_BIND || m->readonly || !within(home, m->source))
			continue;
		/* The home as the sandbox sees it: the target and what of the
		 * home lies below the source ("" for the source itself). */
		rest = strcmp(m->source, "/") == 0 ? home : home + strlen(m->source);
		for (size_t k = 0; k < sizeof(login_names) / sizeof(login_names[0]); k++) {
			bool dup = false;

			if (n == max || snprintf(out[n], PATH_MAX, "%s%s/%s", m->target, rest,
						 login_names[k]) >= PATH_MAX)
				continue;
			for (size_t j = 0; !dup && j < p->n_protect; j++)
				dup = strcmp(p->protect[j], out[n]) == 0;
			for (size_t j = 0; !dup && j < n; j++)
				dup = strcmp(out[j], out[n]) == 0;
			if (!dup)
				n++;
		}
	}
	return n;
}
