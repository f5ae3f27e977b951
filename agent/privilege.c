/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guestbench-protocol.h"
#include "privilege.h"

/* Raw syscalls: glibc wraps neither, and libcap is one dependency too many for this. */
static int agent_privilege_capget(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	return (int)syscall(SYS_capget, &hdr, data);
}

static int agent_privilege_capset(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	return (int)syscall(SYS_capset, &hdr, data);
}

gboolean agent_privilege_get(guint64 *effective, guint64 *permitted, guint64 *inheritable,
                             gboolean *no_new_privs, GError **error)
{
	struct __user_cap_data_struct data[2] = { { 0 } };
	int nnp;

	if (agent_privilege_capget(data) != 0) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "capget: %s", g_strerror(errsv));
		return FALSE;
	}
	nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (nnp < 0) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "PR_GET_NO_NEW_PRIVS: %s",
		            g_strerror(errsv));
		return FALSE;
	}
	*effective = ((guint64)data[1].effective << 32) | data[0].effective;
	*permitted = ((guint64)data[1].permitted << 32) | data[0].permitted;
	*inheritable = ((guint64)data[1].inheritable << 32) | data[0].inheritable;
	*no_new_privs = nnp == 1;
	return TRUE;
}

/* Empties the bounding set; FALSE (nothing to report) without CAP_SETPCAP. */
static gboolean agent_privilege_drop_bounding(guint *dropped, GError **error)
{
	/* PR_CAPBSET_READ answers EINVAL past the kernel's last capability */
	for (int cap = 0; cap < 64; cap++) {
		int in_set = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in_set < 0 && errno == EINVAL)
			break;
		if (in_set <= 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			int errsv = errno;
			/* an unprivileged agent cannot, and needs not: it can gain nothing */
			if (errsv == EPERM)
				return FALSE;
			g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "PR_CAPBSET_DROP %d: %s", cap,
			            g_strerror(errsv));
			return FALSE;
		}
		(*dropped)++;
	}
	return TRUE;
}

/*
 * capset() changes the calling thread only: a thread that existed before
 * would keep everything. Fail loudly rather than run half-dropped.
 */
static gboolean agent_privilege_check_threads(GError **error)
{
	g_autoptr(GDir) dir = g_dir_open("/proc/self/task", 0, NULL);
	const char *name;

	/* without /proc there is nothing to check against */
	if (dir == NULL)
		return TRUE;
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *fn = g_build_filename("/proc/self/task", name, "status", NULL);
		g_autofree char *contents = NULL;
		const char *p;

		if (!g_file_get_contents(fn, &contents, NULL, NULL))
			continue;
		p = strstr(contents, "\nCapPrm:");
		if (p == NULL)
			continue;
		if (g_ascii_strtoull(p + strlen("\nCapPrm:"), NULL, 16) != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
			            "thread %s started before the drop and keeps its capabilities",
			            name);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean agent_privilege_drop(GError **error)
{
	struct __user_cap_data_struct none[2] = { { 0 } };
	g_autoptr(GError) error_local = NULL;
	guint64 eff = 0;
	guint64 prm = 0;
	guint64 inh = 0;
	gboolean nnp = FALSE;
	guint dropped = 0;

	/* the agent never executes anything; no exec may ever gain privileges either */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 && errno != EINVAL) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "PR_SET_NO_NEW_PRIVS: %s",
		            g_strerror(errsv));
		return FALSE;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "PR_CAP_AMBIENT_CLEAR_ALL: %s",
		            g_strerror(errsv));
		return FALSE;
	}
	/* before capset: dropping from the bounding set needs CAP_SETPCAP */
	if (!agent_privilege_drop_bounding(&dropped, &error_local) && error_local != NULL) {
		g_propagate_error(error, g_steal_pointer(&error_local));
		return FALSE;
	}
	if (agent_privilege_capset(none) != 0) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "capset: %s", g_strerror(errsv));
		return FALSE;
	}
	if (!agent_privilege_get(&eff, &prm, &inh, &nnp, error))
		return FALSE;
	if (eff != 0 || prm != 0 || inh != 0) {
		g_set_error(
		    error, GB_ERROR, GB_ERROR_FAILED,
		    "capabilities remain after dropping them (effective 0x%" G_GINT64_MODIFIER
		    "x, permitted 0x%" G_GINT64_MODIFIER "x)",
		    eff, prm);
		return FALSE;
	}
	if (!agent_privilege_check_threads(error))
		return FALSE;
	g_debug("privileges dropped: no capabilities, no_new_privs %s, %u removed from the "
	        "bounding set",
	        nnp ? "set" : "unsupported", dropped);
	return TRUE;
}
