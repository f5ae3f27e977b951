/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * libvirt's domain XML: parsed here whether it comes from libvirt's API
 * (virDomainGetXMLDesc, transport/virt.h) or, with --libvirt-dir, from
 * libvirt's state directory (NAME.xml, a <domstatus> wrapping the <domain>).
 * The guestbench port is the <channel type='unix'> whose <target
 * type='virtio' name='org.guestbench.agent.0'/>; its <source path=> is the
 * socket libvirt connects to.
 */

#define CLI_LIBVIRT_DIR_ENV "GUESTBENCH_LIBVIRT_DIR"
#define CLI_LIBVIRT_CHANNEL "org.guestbench.agent.0"
#define CLI_LIBVIRT_QGA_CHANNEL "org.qemu.guest_agent.0"
/* A real domstatus is 20-200 KiB; anything far bigger is not libvirt's. */
#define CLI_LIBVIRT_MAX_XML_SIZE (4 * 1024 * 1024)

typedef struct {
	char *name;       /* <domain><name> */
	char *state;      /* <domstatus state=...>, NULL for a plain <domain> */
	char *socket;     /* <source path> of the guestbench channel, NULL when it has none */
	char *qga_socket; /* the same for the qemu-ga channel, NULL when none */
	char *problem;    /* why the guestbench channel there cannot be used, NULL when fine */
	/* one guestbench channel of type unix with a virtio target, with or without a path */
	gboolean has_channel;
	gboolean has_qga_channel; /* qemu-ga's channel of type unix, with or without a path */
} CliLibvirtDomain;

void cli_libvirt_domain_free(CliLibvirtDomain *domain);
/* Parses a <domstatus> or a <domain> document; fails with GB_ERROR_PARSE saying why. */
CliLibvirtDomain *cli_libvirt_domain_parse(const char *xml, gssize len, GError **error);
/*
 * A libvirt domain name that can be a file name and an inventory group
 * ("guest NAME"): not empty, valid UTF-8, no '/', no control characters, no
 * '[' or ']', no leading or trailing space, not "." or "..".
 */
gboolean cli_libvirt_check_name(const char *name, GError **error);
/*
 * The state directory the user chose: dir when not NULL, else
 * $GUESTBENCH_LIBVIRT_DIR, else NULL, meaning: ask libvirt (virt.h).
 */
const char *cli_libvirt_get_dir(const char *dir);
/* Reads and parses NAME's live XML in the state directory dir; the error says where it looked. */
CliLibvirtDomain *cli_libvirt_domain_load(const char *dir, const char *name, GError **error);
/* The running domains' names in the state directory dir, sorted; source_out (may be NULL) is dir.
 */
GPtrArray *cli_libvirt_list_domains(const char *dir, char **source_out, GError **error);
/* The guestbench channel's socket of a loaded domain, or an error naming what is missing. */
const char *cli_libvirt_domain_get_socket(const CliLibvirtDomain *domain, GError **error);
/* The <channel> snippet to add to a domain (packaging/libvirt/channel.xml without its comment). */
const char *cli_libvirt_channel_snippet(void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliLibvirtDomain, cli_libvirt_domain_free)

G_END_DECLS
