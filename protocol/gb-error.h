/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One error domain for the whole project (protocol, agent and CLI). */
#define GB_ERROR (gb_error_quark())
GQuark gb_error_quark(void);

typedef enum {
	GB_ERROR_FAILED,            /* anything else; wire class GenericError */
	GB_ERROR_PARSE,             /* not valid JSON */
	GB_ERROR_TOO_LARGE,         /* message over the size limit */
	GB_ERROR_TOO_DEEP,          /* message over the nesting limit */
	GB_ERROR_INVALID_REQUEST,   /* valid JSON, not a valid QGA request */
	GB_ERROR_INVALID_ARGUMENT,  /* a member missing, of the wrong type or out of range */
	GB_ERROR_COMMAND_NOT_FOUND, /* wire class CommandNotFound */
	GB_ERROR_COMMAND_DISABLED,  /* wire class CommandNotFound ("... has been disabled") */
	GB_ERROR_BUSY,              /* e.g. a benchmark is already running */
	GB_ERROR_NOT_SUPPORTED,     /* the system cannot do it (tmpfs for O_DIRECT, ...) */
	GB_ERROR_TIMEOUT,
	GB_ERROR_CLOSED, /* the peer went away */
	GB_ERROR_REMOTE, /* the peer answered {"error": ...}; see gb_reply_parse() */
	GB_ERROR_IO,
} GbError;

/* The QGA wire class for an error ("GenericError" or "CommandNotFound"). */
const char *gb_error_wire_class(const GError *error);

G_END_DECLS
