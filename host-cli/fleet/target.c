/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <sys/un.h>

#include "gb-error.h"
#include "fleet/libvirt.h"
#include "fleet/target.h"
#include "transport/qga-exec.h"

/* Schemes that are planned; named here so users get "not supported yet", not "unknown". */
static const char *const cli_target_planned_schemes[] = { NULL };

void cli_target_free(CliTarget *target)
{
	if (target == NULL)
		return;
	g_free(target->text);
	g_free(target->name);
	g_free(target->path);
	g_strfreev(target->tags);
	g_free(target->qmp);
	g_free(target->agent_path);
	g_strfreev(target->require_flags);
	g_free(target->qga_domain);
	g_free(target->origin);
	g_free(target->error);
	g_free(target);
}

CliTarget *cli_target_copy(const CliTarget *target)
{
	CliTarget *copy = g_new0(CliTarget, 1);

	copy->scheme = target->scheme;
	copy->text = g_strdup(target->text);
	copy->name = g_strdup(target->name);
	copy->path = g_strdup(target->path);
	copy->cid = target->cid;
	copy->port = target->port;
	copy->tags = g_strdupv(target->tags);
	copy->qmp = g_strdup(target->qmp);
	copy->agent_path = g_strdup(target->agent_path);
	copy->require_level = target->require_level;
	copy->require_flags = g_strdupv(target->require_flags);
	copy->qga_domain = g_strdup(target->qga_domain);
	copy->origin = g_strdup(target->origin);
	copy->error = g_strdup(target->error);
	return copy;
}

/* Decimal, no sign, no spaces, fits 32 bits: strtoul would accept " -1" and wrap it. */
static gboolean cli_target_parse_u32(const char *text, const char *what, const char *target,
                                     guint32 *out, GError **error)
{
	guint64 val = 0;
	g_autoptr(GError) error_local = NULL;

	if (text[0] == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': %s is empty (expected vsock:CID:PORT)", target,
		            what);
		return FALSE;
	}
	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT32, &val, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': %s '%s' is not a number in 0..%u", target, what,
		            text, G_MAXUINT32);
		return FALSE;
	}
	*out = (guint32)val;
	return TRUE;
}

static gboolean cli_target_parse_vsock(CliTarget *target, const char *rest, GError **error)
{
	const char *colon = strchr(rest, ':');
	g_autofree char *cid = NULL;

	if (colon == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': expected vsock:CID:PORT", target->text);
		return FALSE;
	}
	cid = g_strndup(rest, colon - rest);
	if (!cli_target_parse_u32(cid, "CID", target->text, &target->cid, error))
		return FALSE;
	if (!cli_target_parse_u32(colon + 1, "PORT", target->text, &target->port, error))
		return FALSE;
	/* 0 is the hypervisor and -1 is VMADDR_CID_ANY: neither is a guest to connect to */
	if (target->cid == 0 || target->cid == G_MAXUINT32) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': CID %u cannot be connected to", target->text,
		            target->cid);
		return FALSE;
	}
	if (target->port == G_MAXUINT32) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': PORT %u cannot be connected to", target->text,
		            target->port);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_target_parse_unix(CliTarget *target, const char *path, GError **error)
{
	struct sockaddr_un sun;

	if (path[0] == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': empty socket path", target->text);
		return FALSE;
	}
	/* the kernel cannot address longer paths; say so now rather than at connect time */
	if (strlen(path) >= sizeof(sun.sun_path)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': socket path longer than %zu bytes", target->text,
		            sizeof(sun.sun_path) - 1);
		return FALSE;
	}
	target->scheme = CLI_TARGET_UNIX;
	target->path = g_strdup(path);
	return TRUE;
}

/* "word:" where word is lower-case letters, digits, '-' or '+': a scheme, not a path. */
static char *cli_target_get_scheme(const char *text)
{
	const char *p;

	for (p = text; *p != '\0' && *p != ':'; p++) {
		if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '-' && *p != '+')
			return NULL;
	}
	if (*p != ':' || p == text)
		return NULL;
	return g_strndup(text, p - text);
}

/*
 * libvirt:DOMAIN becomes the unix socket of its channel. A domain that cannot
 * be used is the guest's own error, reported in its row, not a usage error.
 */
static gboolean cli_target_parse_libvirt(CliTarget *target, const char *name,
                                         const CliTargetOptions *opts, GError **error)
{
	g_autoptr(CliLibvirtDomain) domain = NULL;
	g_autoptr(GError) error_local = NULL;
	const char *socket;

	if (!cli_libvirt_check_name(name, error)) {
		g_prefix_error(error, "invalid target '%s': ", target->text);
		return FALSE;
	}
	target->scheme = CLI_TARGET_UNIX;
	domain =
	    cli_libvirt_domain_load(opts != NULL ? opts->libvirt_dir : NULL, name, &error_local);
	socket = domain != NULL ? cli_libvirt_domain_get_socket(domain, &error_local) : NULL;
	/* no guestbench channel but qemu-ga's: libvirt owns that socket, so through virsh */
	if (socket == NULL && domain != NULL && domain->socket == NULL && domain->problem == NULL &&
	    domain->qga_socket != NULL) {
		g_autofree char *virsh = g_find_program_in_path("virsh");
		if (virsh != NULL) {
			target->scheme = CLI_TARGET_QGA;
			target->qga_domain = g_strdup(name);
			return TRUE;
		}
		target->error =
		    g_strdup_printf("%s; it has qemu-ga's channel (" CLI_LIBVIRT_QGA_CHANNEL
		                    "), but reaching the agent through it needs virsh",
		                    error_local->message);
		return TRUE;
	}
	if (socket == NULL) {
		target->error = g_strdup(error_local->message);
		return TRUE;
	}
	if (!cli_target_parse_unix(target, socket, &error_local)) {
		target->error =
		    g_strdup_printf("libvirt domain '%s': %s", name, error_local->message);
		return TRUE;
	}
	return TRUE;
}

CliTarget *cli_target_parse(const char *text, GError **error)
{
	return cli_target_parse_full(text, NULL, error);
}

CliTarget *cli_target_parse_full(const char *text, const CliTargetOptions *opts, GError **error)
{
	g_autoptr(CliTarget) target = g_new0(CliTarget, 1);
	g_autofree char *scheme = NULL;

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "invalid target '': empty");
		return NULL;
	}
	if (!g_utf8_validate(text, -1, NULL)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "invalid target: not valid UTF-8");
		return NULL;
	}
	target->text = g_strdup(text);
	target->name = g_strdup(text);
	target->tags = g_new0(char *, 1);

	if (text[0] == '@') {
		g_set_error(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "invalid target '%s': an inventory (@FILE) names several guests, not one",
		    text);
		return NULL;
	}
	/* absolute and ./relative paths may contain ':' and are never a scheme */
	if (text[0] == '/' || text[0] == '.') {
		if (!cli_target_parse_unix(target, text, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	scheme = cli_target_get_scheme(text);
	if (scheme == NULL) {
		if (!cli_target_parse_unix(target, text, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "unix") == 0) {
		if (!cli_target_parse_unix(target, text + strlen("unix:"), error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "vsock") == 0) {
		target->scheme = CLI_TARGET_VSOCK;
		if (!cli_target_parse_vsock(target, text + strlen("vsock:"), error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "qga") == 0) {
		if (!cli_target_parse_unix(target, text + strlen("qga:"), error))
			return NULL;
		target->scheme = CLI_TARGET_QGA;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "libvirt") == 0) {
		if (!cli_target_parse_libvirt(target, text + strlen("libvirt:"), opts, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strv_contains(cli_target_planned_schemes, scheme)) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "invalid target '%s': scheme '%s:' is not supported yet", text, scheme);
		return NULL;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	            "invalid target '%s': unknown scheme '%s:' (expected unix:PATH, "
	            "vsock:CID:PORT, qga:PATH, libvirt:DOMAIN, @FILE or a path)",
	            text, scheme);
	return NULL;
}

char *cli_target_to_key(const CliTarget *target)
{
	/* an unresolved libvirt:DOMAIN has no socket: the domain is what identifies it */
	if (target->error != NULL)
		return g_strdup(target->text);
	switch (target->scheme) {
	case CLI_TARGET_UNIX:
		return g_strdup_printf("unix:%s", target->path);
	case CLI_TARGET_VSOCK:
		return g_strdup_printf("vsock:%u:%u", target->cid, target->port);
	case CLI_TARGET_QGA:
		if (target->qga_domain != NULL)
			return g_strdup_printf("libvirt:%s", target->qga_domain);
		return g_strdup_printf("qga:%s", target->path);
	default:
		break;
	}
	return g_strdup(target->text);
}

void cli_target_get_address(const CliTarget *target, CliAddress *address)
{
	memset(address, 0, sizeof(*address));
	switch (target->scheme) {
	case CLI_TARGET_VSOCK:
		address->kind = CLI_ADDRESS_VSOCK;
		break;
	case CLI_TARGET_QGA:
		/* libvirt:DOMAIN with only qemu-ga's channel: through virsh, path is NULL */
		address->kind =
		    target->qga_domain != NULL ? CLI_ADDRESS_QGA_DOMAIN : CLI_ADDRESS_QGA;
		break;
	case CLI_TARGET_UNIX:
	default:
		address->kind = CLI_ADDRESS_UNIX;
		break;
	}
	address->text = target->text;
	address->path = target->path;
	address->cid = target->cid;
	address->port = target->port;
	address->qga_domain = target->qga_domain;
	address->agent_path = target->agent_path;
}

gboolean cli_targets_apply_qga_agent(GPtrArray *targets, const char *agent, GError **error)
{
	guint n_qga = 0;

	if (agent == NULL)
		return TRUE;
	if (!cli_qga_check_agent_path(agent, error))
		return FALSE;
	for (guint i = 0; targets != NULL && i < targets->len; i++) {
		CliTarget *target = g_ptr_array_index(targets, i);
		if (target->scheme != CLI_TARGET_QGA)
			continue;
		g_free(target->agent_path);
		target->agent_path = g_strdup(agent);
		n_qga++;
	}
	if (n_qga == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--qga-agent %s: no target is reached through qemu-ga (qga:PATH)",
		            agent);
		return FALSE;
	}
	return TRUE;
}
