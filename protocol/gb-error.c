/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"

/* The name is pasted into a string as written: clang-format would space out its dashes. */
/* clang-format off */
G_DEFINE_QUARK(guestbench-error-quark, gb_error)
/* clang-format on */

const char *gb_error_wire_class(const GError *error)
{
	/* qemu-ga has only these two classes on the wire; a disabled command is
	 * reported as CommandNotFound too, with its own text. */
	if (error != NULL && error->domain == GB_ERROR &&
	    (error->code == GB_ERROR_COMMAND_NOT_FOUND || error->code == GB_ERROR_COMMAND_DISABLED))
		return "CommandNotFound";
	return "GenericError";
}
