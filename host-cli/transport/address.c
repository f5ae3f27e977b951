/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "transport/address.h"

CliAddress *cli_address_copy(const CliAddress *address)
{
	CliAddress *copy = g_new0(CliAddress, 1);

	copy->kind = address->kind;
	copy->text = g_strdup(address->text);
	copy->path = g_strdup(address->path);
	copy->cid = address->cid;
	copy->port = address->port;
	copy->uri = g_strdup(address->uri);
	copy->domain = g_strdup(address->domain);
	copy->agent_path = g_strdup(address->agent_path);
	return copy;
}

void cli_address_free(CliAddress *address)
{
	if (address == NULL)
		return;
	/* a copy owns its strings: the const is for the borrowed views */
	g_free((char *)address->text);
	g_free((char *)address->path);
	g_free((char *)address->uri);
	g_free((char *)address->domain);
	g_free((char *)address->agent_path);
	g_free(address);
}
