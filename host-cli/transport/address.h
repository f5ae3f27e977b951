/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Where a session connects to: what the transport needs of a guest, nothing
 * of the fleet (names, tags, inventories). fleet/target.h fills one from a
 * CliTarget (cli_target_get_address()); a session keeps its own copy.
 */
typedef enum {
	CLI_ADDRESS_UNIX,  /* path: the agent's unix socket */
	CLI_ADDRESS_VSOCK, /* cid, port: the agent's vsock port */
	/* path: qemu-ga's unix socket; the agent runs through guest-exec (qga.h) */
	CLI_ADDRESS_QGA,
	/* uri, domain: qemu-ga of a libvirt domain, each call through virDomainQemuAgentCommand */
	CLI_ADDRESS_QGA_DOMAIN,
	/* uri, domain: the guestbench channel of a libvirt domain (virDomainOpenChannel) */
	CLI_ADDRESS_LIBVIRT,
} CliAddressKind;

typedef struct {
	CliAddressKind kind;
	const char *text;   /* how log and error messages name the guest (the target text) */
	const char *path;   /* CLI_ADDRESS_UNIX, CLI_ADDRESS_QGA */
	guint32 cid;        /* CLI_ADDRESS_VSOCK */
	guint32 port;       /* CLI_ADDRESS_VSOCK */
	const char *uri;    /* CLI_ADDRESS_QGA_DOMAIN, CLI_ADDRESS_LIBVIRT: NULL for the default */
	const char *domain; /* CLI_ADDRESS_QGA_DOMAIN, CLI_ADDRESS_LIBVIRT */
	/* CLI_ADDRESS_QGA*: the agent binary in the guest, NULL for GB_AGENT_DEFAULT_BINARY */
	const char *agent_path;
} CliAddress;

/*
 * A copy that owns its strings (an address filled by its owner usually
 * borrows them); free it with cli_address_free(), and only it.
 */
CliAddress *cli_address_copy(const CliAddress *address);
void cli_address_free(CliAddress *address);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliAddress, cli_address_free)

G_END_DECLS
