/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>
#include <sys/un.h>

#include "gb-error.h"
#include "fleet/libvirt.h"
#include "fleet/target.h"
#include "render/escape.h"
#include "transport/virt.h"
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
	g_free(target->domain);
	g_free(target->uri);
	g_free(target->host);
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
	copy->require_arm_level = target->require_arm_level;
	copy->require_flags = g_strdupv(target->require_flags);
	copy->domain = g_strdup(target->domain);
	copy->uri = g_strdup(target->uri);
	copy->host = g_strdup(target->host);
	copy->origin = g_strdup(target->origin);
	copy->error = g_strdup(target->error);
	copy->vmid = target->vmid;
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
 * libvirt:DOMAIN through libvirt's state files (--libvirt-dir): the unix
 * socket of its channel. A domain that cannot be used is the guest's own
 * error, reported in its row, not a usage error.
 */
static void cli_target_parse_libvirt_dir(CliTarget *target, const char *dir, const char *name)
{
	g_autoptr(CliLibvirtDomain) domain = NULL;
	g_autoptr(GError) error_local = NULL;
	const char *socket;

	domain = cli_libvirt_domain_load(dir, name, &error_local);
	socket = domain != NULL ? cli_libvirt_domain_get_socket(domain, &error_local) : NULL;
	/* no guestbench channel but qemu-ga's: libvirt owns that socket, so through libvirt */
	if (socket == NULL && domain != NULL && domain->socket == NULL && domain->problem == NULL &&
	    domain->qga_socket != NULL) {
		target->scheme = CLI_TARGET_QGA;
		target->domain = g_strdup(name);
		return;
	}
	if (socket == NULL) {
		target->error = g_strdup(error_local->message);
		return;
	}
	if (!cli_target_parse_unix(target, socket, &error_local))
		target->error =
		    g_strdup_printf("libvirt domain '%s': %s", name, error_local->message);
}

/* How a list of connections is named in messages. */
static char *cli_target_describe_uris(const char *const *uris)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; uris[i] != NULL; i++)
		g_string_append_printf(out, "%s%s", i > 0 ? ", " : "", uris[i]);
	return g_string_free(out, FALSE);
}

void cli_target_set_libvirt(CliTarget *target, CliVirtConn *conn, const CliVirtDomain *domain)
{
	g_autoptr(CliLibvirtDomain) parsed = NULL;
	g_autoptr(GError) error_local = NULL;

	target->scheme = CLI_TARGET_UNIX;
	g_free(target->uri);
	target->uri = g_strdup(cli_virt_conn_get_requested_uri(conn));
	g_free(target->host);
	target->host = g_strdup(cli_virt_conn_get_remote_host(conn));
	g_free(target->domain);
	target->domain = g_strdup(domain->name);
	if (!domain->active) {
		target->error = g_strdup_printf("libvirt domain '%s' is not running (%s)",
		                                domain->name, domain->state);
		return;
	}
	parsed = cli_libvirt_domain_parse(domain->xml, -1, &error_local);
	if (parsed == NULL) {
		target->error = g_strdup_printf("libvirt domain '%s': its XML: %s", domain->name,
		                                error_local->message);
		return;
	}
	/* the live XML of a running domain names the socket, also one libvirt chose */
	if (parsed->socket != NULL) {
		target->scheme = CLI_TARGET_LIBVIRT;
		return;
	}
	if (parsed->problem == NULL && parsed->qga_socket != NULL) {
		target->scheme = CLI_TARGET_QGA;
		return;
	}
	cli_libvirt_domain_get_socket(parsed, &error_local);
	target->error = g_strdup(error_local->message);
}

/*
 * libvirt:DOMAIN through libvirt: looked up on every --connect URI (or the
 * default connection); it must be on exactly one. What makes a domain
 * unusable (not running, no channel, a connection that failed) is the
 * guest's own error.
 */
static void cli_target_parse_libvirt_api(CliTarget *target, const char *name,
                                         const char *const *uris)
{
	static const char *const default_uris[] = { NULL, NULL };
	const char *const *list = uris != NULL && uris[0] != NULL ? uris : default_uris;
	guint n_list = uris != NULL && uris[0] != NULL ? g_strv_length((char **)uris) : 1;
	g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) found_on = g_ptr_array_new();
	g_autoptr(CliVirtDomain) found = NULL;
	CliVirtConn *found_conn = NULL;

	for (guint i = 0; i < n_list; i++) {
		g_autoptr(GError) error = NULL;
		CliVirtConn *conn = cli_virt_connect(list[i], &error);
		CliVirtDomain *domain = NULL;

		if (conn != NULL)
			domain = cli_virt_get_domain(conn, name, &error);
		if (domain == NULL) {
			/* "no such domain" matters only when no connection has it */
			g_ptr_array_add(
			    errors, g_strdup_printf("%s%s", error->message,
			                            conn != NULL ? cli_targets_session_hint(
			                                               cli_virt_conn_get_uri(conn))
			                                         : ""));
			continue;
		}
		g_ptr_array_add(found_on, (gpointer)cli_virt_conn_get_uri(conn));
		if (found == NULL) {
			found = domain;
			found_conn = conn;
		} else {
			cli_virt_domain_free(domain);
		}
	}
	if (found_on->len > 1) {
		g_autofree char *where = NULL;
		g_ptr_array_add(found_on, NULL);
		where = cli_target_describe_uris((const char *const *)found_on->pdata);
		target->error = g_strdup_printf(
		    "libvirt domain '%s' exists on %s: give it one connection (an inventory's "
		    "connect=, or a single --connect)",
		    name, where);
		return;
	}
	if (found == NULL) {
		GString *why = g_string_new(NULL);
		for (guint i = 0; i < errors->len; i++)
			g_string_append_printf(why, "%s%s", i > 0 ? "; " : "",
			                       (const char *)g_ptr_array_index(errors, i));
		target->error = g_string_free(why, FALSE);
		return;
	}
	cli_target_set_libvirt(target, found_conn, found);
}

static gboolean cli_target_parse_libvirt(CliTarget *target, const char *name,
                                         const CliTargetOptions *opts, GError **error)
{
	const char *dir = cli_libvirt_get_dir(opts != NULL ? opts->libvirt_dir : NULL);

	if (!cli_libvirt_check_name(name, error)) {
		g_prefix_error(error, "invalid target '%s': ", target->text);
		return FALSE;
	}
	target->scheme = CLI_TARGET_UNIX;
	if (dir != NULL)
		cli_target_parse_libvirt_dir(target, dir, name);
	else
		cli_target_parse_libvirt_api(target, name, opts != NULL ? opts->connect : NULL);
	return TRUE;
}

/*
 * The qemu-ga socket of a libvirt domain: libvirt names it after the channel
 * (.../org.qemu.guest_agent.0) under its own directories.
 */
static gboolean cli_target_is_libvirt_qga(const char *path)
{
	g_autofree char *base = g_path_get_basename(path);

	return g_strcmp0(base, CLI_VIRT_QGA_CHANNEL) == 0 ||
	       g_str_has_prefix(path, "/var/lib/libvirt/") ||
	       g_str_has_prefix(path, "/run/libvirt/");
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
		if (cli_target_is_libvirt_qga(target->path)) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "invalid target '%s': that is libvirt's own connection to qemu-ga "
			    "(libvirt holds it; a second client breaks libvirt's link to the "
			    "agent): use libvirt:DOMAIN",
			    text);
			return NULL;
		}
		target->scheme = CLI_TARGET_QGA;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "libvirt") == 0) {
		if (!cli_target_parse_libvirt(target, text + strlen("libvirt:"), opts, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "pve") == 0) {
		if (!cli_target_parse_pve(target, text + strlen("pve:"), error))
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
	            "vsock:CID:PORT, qga:PATH, libvirt:DOMAIN, pve:VMID, @FILE or a path)",
	            text, scheme);
	return NULL;
}

/* A domain is the same guest when its name and its connection are. */
static char *cli_target_libvirt_key(const CliTarget *target)
{
	if (target->uri == NULL)
		return g_strdup_printf("libvirt:%s", target->domain);
	return g_strdup_printf("libvirt:%s@%s", target->domain, target->uri);
}

char *cli_target_to_key(const CliTarget *target)
{
	/* a Proxmox VE VM is its VMID on its node, whichever path reaches it */
	if (target->vmid != 0)
		return target->host != NULL
		           ? g_strdup_printf("pve:%u@%s", target->vmid, target->host)
		           : g_strdup_printf("pve:%u", target->vmid);
	/* an unresolved libvirt:DOMAIN has no socket: the domain is what identifies it */
	if (target->error != NULL)
		return g_strdup(target->text);
	switch (target->scheme) {
	case CLI_TARGET_UNIX:
		return g_strdup_printf("unix:%s", target->path);
	case CLI_TARGET_VSOCK:
		return g_strdup_printf("vsock:%u:%u", target->cid, target->port);
	case CLI_TARGET_QGA:
		if (target->domain != NULL)
			return cli_target_libvirt_key(target);
		return g_strdup_printf("qga:%s", target->path);
	case CLI_TARGET_LIBVIRT:
		return cli_target_libvirt_key(target);
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
		/* libvirt:DOMAIN with only qemu-ga's channel: through libvirt, path is NULL */
		address->kind = target->domain != NULL ? CLI_ADDRESS_QGA_DOMAIN : CLI_ADDRESS_QGA;
		break;
	case CLI_TARGET_LIBVIRT:
		address->kind = CLI_ADDRESS_LIBVIRT;
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
	address->domain = target->domain;
	address->uri = target->uri;
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

const char *cli_targets_session_hint(const char *uri)
{
	if (uri != NULL && g_str_has_suffix(uri, ":///session"))
		return " (this is a session URI, which has only this user's own domains: the "
		       "system's domains need --connect qemu:///system)";
	return "";
}

/* A hypervisor that could not be asked: one row, named after its URI. */
static CliTarget *cli_targets_failed_connection(const char *uri, const char *message)
{
	CliTarget *target = g_new0(CliTarget, 1);

	target->scheme = CLI_TARGET_UNIX;
	target->text = g_strdup_printf("libvirt:%s", uri != NULL ? uri : "");
	target->name = g_strdup(uri != NULL ? uri : "libvirt");
	target->tags = g_new0(char *, 1);
	target->uri = g_strdup(uri);
	target->error = g_strdup(message);
	return target;
}

GPtrArray *cli_targets_from_libvirt(const char *const *uris, GError **error)
{
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);

	if (uris == NULL || uris[0] == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "no libvirt connection given (--connect URI)");
		return NULL;
	}
	for (guint i = 0; uris[i] != NULL; i++) {
		g_autoptr(GError) error_local = NULL;
		g_autoptr(GPtrArray) domains = NULL;
		CliVirtConn *conn = cli_virt_connect(uris[i], &error_local);
		guint n_off = 0;
		guint n_running = 0;

		if (conn != NULL)
			domains = cli_virt_list_domains(conn, &error_local);
		if (domains == NULL) {
			g_ptr_array_add(
			    targets, cli_targets_failed_connection(uris[i], error_local->message));
			continue;
		}
		for (guint j = 0; j < domains->len; j++) {
			const CliVirtDomain *domain = g_ptr_array_index(domains, j);
			CliTarget *target;

			if (!domain->active) {
				n_off++;
				continue;
			}
			target = g_new0(CliTarget, 1);
			target->text = g_strdup_printf("libvirt:%s", domain->name);
			target->name = g_strdup(domain->name);
			target->tags = g_new0(char *, 1);
			cli_target_set_libvirt(target, conn, domain);
			g_ptr_array_add(targets, target);
			n_running++;
		}
		if (n_running == 0) {
			g_autofree char *msg = g_strdup_printf(
			    "no running domain on %s%s", cli_virt_conn_get_uri(conn),
			    cli_targets_session_hint(cli_virt_conn_get_uri(conn)));
			g_ptr_array_add(targets, cli_targets_failed_connection(uris[i], msg));
		}
		if (n_off > 0) {
			g_autofree char *esc = cli_escape_terminal(cli_virt_conn_get_uri(conn));
			g_printerr("guestbench: %s: %u domain(s) not running, left out\n", esc,
			           n_off);
		}
	}
	return g_steal_pointer(&targets);
}

/* A DNS name's limit. */
#define CLI_TARGET_MAX_HOST_LEN 253

gboolean cli_target_check_hypervisor_name(const char *host, GError **error)
{
	gsize len = strlen(host);

	if (len == 0 || len > CLI_TARGET_MAX_HOST_LEN) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "host name must have 1 to %d bytes, not %" G_GSIZE_FORMAT,
		            CLI_TARGET_MAX_HOST_LEN, len);
		return FALSE;
	}
	for (const char *p = host; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (g_unichar_iscntrl(c) || g_unichar_type(c) == G_UNICODE_FORMAT) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "host name has a control character (U+%04X)", c);
			return FALSE;
		}
	}
	return TRUE;
}

const char *cli_target_get_hypervisor(const CliTarget *target)
{
	return target->host != NULL ? target->host : g_get_host_name();
}
