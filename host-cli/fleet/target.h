/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "transport/address.h"
#include "transport/virt.h"

G_BEGIN_DECLS

/*
 * Where a guest's agent is reached. New schemes (qga:, libvirt:, @FILE
 * inventories) add a value here and a branch in cli_target_parse();
 * cli_target_get_address() turns a target into what the session connects to.
 */
typedef enum {
	CLI_TARGET_UNIX,  /* unix:PATH or a bare path */
	CLI_TARGET_VSOCK, /* vsock:CID:PORT */
	CLI_TARGET_QGA, /* qga:PATH, qemu-ga's socket: the agent runs through guest-exec (qga.h) */
	/* libvirt:DOMAIN with a guestbench channel: opened by libvirt (virt.h); uri, domain */
	CLI_TARGET_LIBVIRT,
} CliTargetScheme;

typedef struct {
	CliTargetScheme scheme;
	char *text;   /* exactly as given on the command line */
	char *name;   /* guest name shown in output; the text unless told otherwise */
	char *path;   /* CLI_TARGET_UNIX, CLI_TARGET_QGA */
	guint32 cid;  /* CLI_TARGET_VSOCK */
	guint32 port; /* CLI_TARGET_VSOCK */
	/* from an inventory (NULL otherwise) */
	char **tags;             /* tags=, never NULL: empty when none */
	char *qmp;               /* qmp=: the host-side QMP socket, for a later QMP feature */
	char *agent_path;        /* agent_path=: where the agent binary lives in the guest */
	guint require_level;     /* require_level=x86-64-vN for audit (1..4); 0: none */
	guint require_arm_level; /* require_level=armv8.x-a for audit (gb-isa.h code); 0: none */
	char **require_flags;    /* require_flags=a,b for audit; NULL: none */
	/*
	 * libvirt:DOMAIN: the domain, and the libvirt connection it was found on
	 * (uri, NULL for libvirt's default; host, the hypervisor of a remote uri,
	 * NULL for this one). CLI_TARGET_LIBVIRT, or CLI_TARGET_QGA when the
	 * domain has only qemu-ga's channel: libvirt holds that socket, so calls
	 * go through virDomainQemuAgentCommand; path is NULL then.
	 */
	char *domain;
	char *uri;
	char *host;   /* also an inventory guest's host=: the hypervisor it runs on */
	char *origin; /* "FILE:LINE" of the [guest NAME] group, NULL from the command line */
	/*
	 * libvirt:DOMAIN whose socket could not be found (domain not running, no
	 * channel, bad XML): the guest ends with this error and is never contacted,
	 * so one broken domain does not stop the rest of the fleet.
	 */
	char *error;
	/*
	 * pve:VMID (fleet/pve-target.c): the Proxmox VE VM, 0 otherwise. It is
	 * CLI_TARGET_UNIX on our port or CLI_TARGET_QGA on VMID.qga, qmp its VMID.qmp.
	 */
	guint32 vmid;
} CliTarget;

/* How targets are found and selected (--connect, --libvirt-dir, --inventory, --tag, --name). */
typedef struct {
	/*
	 * --connect URI...: the libvirt connections libvirt:DOMAIN is looked up
	 * on (NULL-terminated; NULL or empty: libvirt's default connection).
	 */
	const char *const *connect;
	/* --libvirt-dir (else $GUESTBENCH_LIBVIRT_DIR): read libvirt's state files instead */
	const char *libvirt_dir;
	const char *const *inventories; /* --inventory FILE, NULL-terminated or NULL */
	/*
	 * Selection of inventory guests (targets named on the command line always
	 * run): a guest is selected when it has at least one of tags (if any are
	 * given) and its name matches at least one of the globs in names (if any).
	 */
	const char *const *tags;
	const char *const *names;
} CliTargetOptions;

/*
 * Makes target the libvirt domain found on conn: CLI_TARGET_LIBVIRT with its
 * guestbench channel, CLI_TARGET_QGA with only qemu-ga's, else error says
 * why it cannot be reached (not running, no channel and the XML to add).
 */
void cli_target_set_libvirt(CliTarget *target, CliVirtConn *conn, const CliVirtDomain *domain);

/*
 * The hypervisor the guest runs on, as benchmarks are scheduled and results are
 * grouped by it: target->host (a remote libvirt URI's host, an inventory's
 * [hypervisor NAME] or host=), else this host's name.
 */
const char *cli_target_get_hypervisor(const CliTarget *target);
/* Whether name can be a hypervisor's name in a document: 1..253 bytes, no controls. */
gboolean cli_target_check_hypervisor_name(const char *name, GError **error);

/* Fails with GB_ERROR_INVALID_ARGUMENT and a message that quotes the text. */
CliTarget *cli_target_parse(const char *text, GError **error);
/*
 * The same with options (opts may be NULL). libvirt:DOMAIN is resolved here
 * to the unix socket of the domain's guestbench channel; when that fails the
 * target is still returned, with target->error set. @FILE is refused: it
 * names several guests (see cli_targets_resolve()).
 */
CliTarget *cli_target_parse_full(const char *text, const CliTargetOptions *opts, GError **error);
CliTarget *cli_target_copy(const CliTarget *target);
void cli_target_free(CliTarget *target);
/* Canonical form ("unix:/a", "vsock:3:1234"): two targets are the same guest iff equal. */
char *cli_target_to_key(const CliTarget *target);
/*
 * Fills address with where a session reaches target (cli_session_open()); it
 * borrows target's strings, so it is valid while target is unchanged. Not for
 * a target with error set: there is nothing to connect to.
 */
void cli_target_get_address(const CliTarget *target, CliAddress *address);

/*
 * --qga-agent PATH: sets agent_path of every qga: target (also libvirt:DOMAIN
 * reached through qemu-ga) to agent; the command line wins over an
 * inventory's agent_path=. Nothing to do when agent is NULL. Fails with
 * GB_ERROR_INVALID_ARGUMENT when agent is not an absolute path
 * (cli_qga_check_agent_path()) or no target is reached through qemu-ga.
 */
gboolean cli_targets_apply_qga_agent(GPtrArray *targets, const char *agent, GError **error);
/*
 * --connect URI... without targets: every running domain of each connection,
 * in URI order then by name (shut-off ones are left out and said on stderr).
 * A connection that fails is one guest named after the URI with that error,
 * so that a hypervisor is never silently missing. Fails only when uris is
 * empty.
 */
GPtrArray *cli_targets_from_libvirt(const char *const *uris, GError **error);
/* The hint for a libvirt session URI that has not got the system's domains, or "". */
const char *cli_targets_session_hint(const char *uri);

/*
 * pve:VMID (fleet/pve-target.c): makes target the VM's best path (our port
 * from args:, else qemu-ga's VMID.qga), its qmp VMID.qmp, or sets its error
 * saying what is missing and the qm commands that add it. reach_out[0] (may
 * be NULL) is "port", "qga" or NULL.
 */
void cli_target_set_pve(CliTarget *target, guint32 vmid, const char *reach_out[1]);
/* The text after "pve:": fails (usage error) only when it is not a VMID. */
gboolean cli_target_parse_pve(CliTarget *target, const char *text, GError **error);
/* What to tell a VM without a path: the qm commands that add our port or qemu-ga. */
char *cli_pve_missing_port_hint(guint32 vmid);
/* Whether a --connect URI is a Proxmox VE one (pve:..., pve+ssh://...). */
gboolean cli_pve_is_uri(const char *uri);
/* pve+ssh://[USER@]NODE/ or pve:///cluster: run on other nodes over ssh (--hosts). */
gboolean cli_pve_is_remote_uri(const char *uri);
/*
 * The ssh destinations of a remote Proxmox VE URI: [USER@]NODE, or every node
 * of .members (pve:///cluster); fails saying why (.members absent or not JSON).
 */
char **cli_pve_remote_hosts(const char *uri, GError **error);
/* pve:/// is the one a local run takes; anything else fails saying what is. */
gboolean cli_pve_check_uri(const char *uri, GError **error);
/*
 * --connect pve:///: every VM of this node, by VMID (only running ones when
 * running_only; those left out are said on stderr). A node that cannot be
 * read is one guest with that error.
 */
GPtrArray *cli_targets_from_pve(gboolean running_only, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliTarget, cli_target_free)

G_END_DECLS
