/* paddock run --explain: the effective sandbox, as it would be built, in
 * order, without starting anything or touching the workspace. */
#include "run.h"

#include <stdio.h>
#include <string.h>

static void mount_line(const struct mount_op *op, FILE *f)
{
	fprintf(f, "  %-11s %-7s %s", op->what, mounts_op_name(op->kind), op->target);
	switch (op->kind) {
	case MOUNT_OP_BIND:
		fprintf(f, " <- %s %s%s", op->source, op->readonly ? "ro" : "rw",
			op->as_symlink ? " (host symlink, recreated)" : "");
		if (op->skipped)
			fputs(" (optional, missing: skipped)", f);
		fputs(",nosuid,nodev,recursive", f);
		break;
	case MOUNT_OP_TMPFS:
		fprintf(f, " mode=%o size=%llu nosuid,nodev", op->mode,
			(unsigned long long)op->size);
		break;
	case MOUNT_OP_PROC:
		fputs(op->host_proc ? " host /proc bound (no pid namespace)" : " fresh procfs", f);
		fputs(" nosuid,nodev,noexec", f);
		break;
	case MOUNT_OP_DEV:
		fputs(" tmpfs ro: null zero full random urandom tty, pts (new instance), shm", f);
		break;
	case MOUNT_OP_DIR:
		fprintf(f, " mode=%o", op->mode);
		break;
	case MOUNT_OP_SYMLINK:
		fprintf(f, " -> %s", op->link);
		break;
	case MOUNT_OP_PROTECT:
		fputs(" ro (a placeholder is created if missing)", f);
		break;
	case MOUNT_OP_PIN:
		fputs(" bound on itself, so it cannot be renamed away", f);
		break;
	case MOUNT_OP_REMOUNT:
		fputs(op->readonly ? " ro (a git directory under protect_git \"allowlist\")"
				   : " rw again on top of its protected git directory",
		      f);
		break;
	}
	fputc('\n', f);
}

static void landlock_lines(const struct landlock_info *l, FILE *f)
{
	fprintf(f, "landlock: ABI %d, %s\n", l->abi, l->enabled ? "enabled" : "not applied");
	for (size_t i = 0; l->enabled && i < l->n_rules; i++) {
		fprintf(f, "  %s:", l->rules[i].path);
		for (int b = 0; b < 64; b++)
			if (l->rules[i].access & (1ull << b))
				fprintf(f, " %s", landlock_access_name(1ull << b));
		fputc('\n', f);
	}
	if (l->enabled && l->handled_net) {
		fputs("  tcp bind:", f);
		for (size_t i = 0; i < l->n_tcp_bind; i++)
			fprintf(f, " %u", l->tcp_bind[i]);
		fputs("; tcp connect:", f);
		for (size_t i = 0; i < l->n_tcp_connect; i++)
			fprintf(f, " %u", l->tcp_connect[i]);
		fputc('\n', f);
	}
	if (l->enabled && l->scoped)
		fprintf(f, "  scoped:%s%s\n", l->scoped & 1 ? " abstract_unix_socket" : "",
			l->scoped & 2 ? " signal" : "");
}

/* As asked for: nothing is bound by --explain. */
static void services_lines(const struct policy *p, FILE *f)
{
	if (p->n_services == 0) {
		fputs("services: none\n", f);
		return;
	}
	fputs("services (started by paddock-init before the command, each in its own session):\n",
	      f);
	for (size_t i = 0; i < p->n_services; i++) {
		const struct policy_service *sv = &p->services[i];

		fprintf(f, "  %s:", sv->name);
		for (size_t k = 0; k < sv->argc; k++)
			fprintf(f, " %s", sv->argv[k]);
		if (sv->lease_ms)
			fprintf(f, " (lease %llu ms: may outlive the command)\n",
				(unsigned long long)sv->lease_ms);
		else
			fputs(" (no lease: ends with the command)\n", f);
	}
}

static void ports_lines(const struct policy *p, FILE *f)
{
	char host[64];

	if (p->n_ports == 0) {
		fputs("ports: none\n", f);
		return;
	}
	fputs("ports (host loopback -> sandbox loopback, relayed from its network namespace):\n",
	      f);
	for (size_t i = 0; i < p->n_ports; i++) {
		policy_port_host_format(host, sizeof(host), p->ports[i].host_addr,
					p->ports[i].host_port);
		fprintf(f, "  %s -> %u%s%s%s%s\n", host, p->ports[i].sandbox_port,
			p->ports[i].host_port ? "" : " (auto: the sandbox port if free, else any)",
			p->ports[i].http ? " http, stamped with Paddock-Lease" : "",
			p->ports[i].service ? " service " : "",
			p->ports[i].service ? p->ports[i].service : "");
	}
}

static void network_lines(const struct run_spec *r, const struct policy *p, FILE *f)
{
	fprintf(f, "network: %s\n",
		!(r->sb.namespaces & POLICY_NS_NET) ? "the host's (weakened)"
		: p->network == POLICY_NET_MEDIATED
		    ? "mediated: paddock-mediator is the only way out"
		    : "none (loopback only)");
	for (size_t i = 0; r->sb.anyip && i < p->n_net_allow; i++) {
		const struct policy_net_rule *rule = &p->net_allow[i];

		fprintf(f, "  allow %-5s %s port", policy_net_proto_name(rule->protocol),
			rule->host);
		for (size_t k = 0; k < rule->n_ports; k++)
			fprintf(f, "%s%u", k ? "," : " ", rule->ports[k]);
		fputc('\n', f);
	}
	for (size_t i = 0; r->sb.anyip && i < p->n_net_resolve; i++)
		fprintf(f, "  resolve %s -> %s\n", p->net_resolve[i].host, p->net_resolve[i].addr);
}

void explain_print(const struct run_spec *r, FILE *f)
{
	const char *w[WEAKEN_COUNT + 1];
	size_t n = weakenings_in_effect(r->opt->weaken, r->policy, w, WEAKEN_COUNT + 1);

	/* First: what a reviewer most needs to see. */
	fputs("widenings (wider than the agent policy):", f);
	for (size_t i = 0; i < r->n_widenings; i++)
		fprintf(f, "\n  %s", r->widenings[i]);
	fputs(r->n_widenings ? "\n" : " none\n", f);
	fprintf(f, "policy: %s\n  sha256 %s\n  effective %s\n", r->policy_label, r->file_sha256,
		r->policy->sha256);
	if (r->project.state != PROJECT_ABSENT)
		fprintf(f, "project policy: %s %s%s%s%s\n", project_state_name(r->project.state),
			r->project.path, r->project.sha256[0] ? " sha256 " : "", r->project.sha256,
			r->project.state == PROJECT_UNTRUSTED ? " (not applied)" : "");
	if (r->opt->config_path[0])
		fprintf(f,
			"defaults: %s\n  sha256 %s (its policy, ttl, binds and env names come "
			"before the command line's)\n",
			r->opt->config_path, r->opt->config_sha256);
	else
		fputs("defaults: none\n", f);
	fputs("namespaces:", f);
	for (unsigned bit = 1; bit <= POLICY_NS_CGROUP; bit <<= 1)
		if (r->sb.namespaces & bit)
			fprintf(f, " %s", policy_ns_name(bit));
	fprintf(f, "\nids: uid %u -> %u, gid %u -> %u (inside -> outside)\n", r->sb.uid_in,
		r->sb.uid_out, r->sb.gid_in, r->sb.gid_out);
	fprintf(f, "hostname: %s\ncwd: %s\n", r->policy->hostname, r->policy->cwd);
	if (r->opt->n_env_pass) {
		fputs("environment passed (--env, --env-file; values not shown):", f);
		for (size_t i = 0; i < r->opt->n_env_pass; i++)
			fprintf(f, " %.*s", (int)strcspn(r->opt->env_pass[i], "="),
				r->opt->env_pass[i]);
		fputc('\n', f);
	}
	fputs("mounts, in order (root: fresh tmpfs, read-only after setup):\n", f);
	for (size_t i = 0; i < r->sb.plan.n; i++)
		mount_line(&r->sb.plan.ops[i], f);
	fputs("capabilities: none (effective, permitted, inheritable, ambient and bounding "
	      "sets empty); no_new_privs\n",
	      f);
	fprintf(f, "session: %s\n",
		r->opt->weaken & WEAKEN_NO_NEW_SESSION ? "the caller's (weakened)"
		: r->stdio == STDIO_TTY		       ? "new; its controlling terminal is its pty"
						       : "new, no controlling terminal");
	fprintf(f, "stdio: %s\n",
		r->stdio == STDIO_TTY	    ? "a pty of the sandbox's own devpts, relayed"
		: r->stdio == STDIO_PIPES   ? "pipes, relayed"
		: r->stdio == STDIO_INHERIT ? "/dev/null and the session's capped output (detached)"
					    : "the caller's fds 0-2 (weakened)");
	if (r->sb.seccomp.enabled) {
		fprintf(f, "seccomp: %u rules, %u syscalls allowed; denied:", r->sb.seccomp.n_rules,
			r->sb.seccomp.n_allowed);
		for (size_t i = 0; i < r->sb.seccomp.n_denied; i++)
			fprintf(f, " %s", r->sb.seccomp.denied[i]);
		fputc('\n', f);
	} else {
		fputs("seccomp: none\n", f);
	}
	landlock_lines(&r->sb.landlock, f);
	network_lines(r, r->policy, f);
	ports_lines(r->policy, f);
	services_lines(r->policy, f);
	fprintf(f, "limits: ttl %llu ms, grace %llu ms", (unsigned long long)r->policy->ttl_ms,
		(unsigned long long)r->policy->grace_ms);
	for (int i = 0; i < POLICY_RLIMIT_COUNT; i++) {
		const struct policy_rlimit_value *v = &r->policy->rlimits[i];

		if (!v->set)
			continue;
		if (v->value == POLICY_UNLIMITED)
			fprintf(f, ", %s unlimited", policy_rlimit_name(i));
		else
			fprintf(f, ", %s %llu", policy_rlimit_name(i),
				(unsigned long long)v->value);
	}
	fputc('\n', f);
	fputs("weakenings:", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %s", w[i]);
	fputs(n ? "\n" : " none\n", f);
}
