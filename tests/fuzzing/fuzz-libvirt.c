/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt domain XML (from /run/libvirt/qemu or `virsh dumpxml`) as the CLI
 * parses it to find a guest's channel socket. The XML is written by libvirt,
 * but names and paths in it come from whoever defined the domain.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "guestbench-protocol.h"
#include "fleet/libvirt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLibvirtDomain) domain = NULL;
	g_autofree char *copy = NULL;

	if (size > CLI_LIBVIRT_MAX_XML_SIZE)
		return 0;
	domain = cli_libvirt_domain_parse((const char *)data, (gssize)size, &error);
	if (domain == NULL) {
		if (error == NULL || !g_utf8_validate(error->message, -1, NULL))
			abort();
		return 0;
	}
	/* a parsed domain has a name fit for a file name and an inventory group */
	if (domain->name == NULL || !cli_libvirt_check_name(domain->name, NULL))
		abort();
	{
		g_autoptr(GError) error_socket = NULL;
		const char *sock = cli_libvirt_domain_get_socket(domain, &error_socket);
		if (sock == NULL && error_socket == NULL)
			abort();
		if (sock != NULL && sock[0] != '/')
			abort();
	}
	/* NUL-terminated input must parse the same with an explicit length of -1 */
	copy = g_strndup((const char *)data, size);
	if (strlen(copy) == size) {
		g_autoptr(CliLibvirtDomain) again = cli_libvirt_domain_parse(copy, -1, NULL);
		if (again == NULL || g_strcmp0(again->name, domain->name) != 0)
			abort();
	}
	return 0;
}
