/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

/*
 * A cross build runs its tests under the cross file's exe_wrapper, qemu-user
 * (tests/meson.build sets GB_TEST_EMULATED=1 there). User-mode emulation
 * shares this machine's kernel: /proc and /sys describe the build machine,
 * not the target; a spawned target binary cannot start without binfmt_misc;
 * and qemu 7.2 drops statx's direct I/O alignment. A test that needs one of
 * these calls this first and returns when it skipped.
 */
static inline gboolean gb_test_skip_if_emulated(const char *why)
{
	if (g_strcmp0(g_getenv("GB_TEST_EMULATED"), "1") != 0)
		return FALSE;
	g_test_skip(why);
	return TRUE;
}
