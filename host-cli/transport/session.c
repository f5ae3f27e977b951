/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "transport/channel.h"
#include "transport/qga.h"
#include "transport/session.h"

CliSession *cli_session_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                             CliSessionOpenFunc func, gpointer user_data)
{
	if (address->kind == CLI_ADDRESS_QGA || address->kind == CLI_ADDRESS_QGA_DOMAIN)
		return cli_qga_open(address, context, max_reply_size, func, user_data);
	return cli_channel_open(address, context, max_reply_size, func, user_data);
}

void cli_session_call(CliSession *session, const char *execute, JsonObject *arguments,
                      CliSessionReplyFunc func, gpointer user_data)
{
	session->backend->call(session, execute, arguments, func, user_data);
}

gboolean cli_session_is_open(const CliSession *session)
{
	return session->backend->is_open(session);
}

void cli_session_set_wait_func(CliSession *session, CliSessionWaitFunc func, gpointer user_data)
{
	if (session->backend->set_wait_func != NULL)
		session->backend->set_wait_func(session, func, user_data);
}

void cli_session_read_pending(CliSession *session)
{
	if (session->backend->read_pending != NULL)
		session->backend->read_pending(session);
}

void cli_session_set_reply_limit(CliSession *session, const char *execute, gsize limit)
{
	session->backend->set_reply_limit(session, execute, limit);
}

char *cli_session_describe_wait(const CliSession *session)
{
	return session->backend->describe_wait(session);
}

void cli_session_interrupt(CliSession *session)
{
	if (session->backend->interrupt != NULL)
		session->backend->interrupt(session);
}

void cli_session_close(CliSession *session)
{
	if (session != NULL)
		session->backend->close(session);
}
