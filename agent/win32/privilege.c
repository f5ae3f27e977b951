/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <windows.h>

#include "gb-error.h"
#include "privilege.h"

#define AGENT_WIN_PRIVILEGE_KEPT "SeChangeNotifyPrivilege"

static void agent_win_privilege_error(GError **error, const char *what)
{
	g_autofree char *msg = g_win32_error_message((gint)GetLastError());

	g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "%s: %s", what, msg);
}

/* The token's privileges (g_free), or NULL with error. */
static TOKEN_PRIVILEGES *agent_win_privilege_get(HANDLE token, GError **error)
{
	g_autofree TOKEN_PRIVILEGES *tp = NULL;
	DWORD len = 0;

	GetTokenInformation(token, TokenPrivileges, NULL, 0, &len);
	if (len == 0) {
		agent_win_privilege_error(error, "cannot read this process's privileges");
		return NULL;
	}
	tp = g_malloc(len);
	if (!GetTokenInformation(token, TokenPrivileges, tp, len, &len)) {
		agent_win_privilege_error(error, "cannot read this process's privileges");
		return NULL;
	}
	return g_steal_pointer(&tp);
}

static char *agent_win_privilege_name(const LUID *luid)
{
	char name[128];
	DWORD n = sizeof(name);

	if (!LookupPrivilegeNameA(NULL, (LUID *)luid, name, &n))
		return g_strdup_printf("LUID %lu:%ld", luid->LowPart, luid->HighPart);
	return g_strdup(name);
}

static HANDLE agent_win_privilege_token(DWORD access, GError **error)
{
	HANDLE token = NULL;

	if (!OpenProcessToken(GetCurrentProcess(), access, &token)) {
		agent_win_privilege_error(error, "cannot open this process's token");
		return NULL;
	}
	return token;
}

char **agent_win_privilege_list(GError **error)
{
	HANDLE token = agent_win_privilege_token(TOKEN_QUERY, error);
	g_autofree TOKEN_PRIVILEGES *tp = NULL;
	g_autoptr(GPtrArray) names = NULL;

	if (token == NULL)
		return NULL;
	tp = agent_win_privilege_get(token, error);
	CloseHandle(token);
	if (tp == NULL)
		return NULL;
	names = g_ptr_array_new_with_free_func(g_free);
	for (DWORD i = 0; i < tp->PrivilegeCount; i++)
		g_ptr_array_add(names, agent_win_privilege_name(&tp->Privileges[i].Luid));
	g_ptr_array_add(names, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

gboolean agent_win_privilege_drop(guint *removed_out, GError **error)
{
	HANDLE token = agent_win_privilege_token(TOKEN_QUERY | TOKEN_ADJUST_PRIVILEGES, error);
	g_autofree TOKEN_PRIVILEGES *tp = NULL;
	g_auto(GStrv) left = NULL;
	LUID keep;
	DWORD removed = 0;
	BOOL ok;

	if (token == NULL)
		return FALSE;
	tp = agent_win_privilege_get(token, error);
	if (tp == NULL) {
		CloseHandle(token);
		return FALSE;
	}
	if (!LookupPrivilegeValueA(NULL, AGENT_WIN_PRIVILEGE_KEPT, &keep)) {
		CloseHandle(token);
		agent_win_privilege_error(error, "cannot look up " AGENT_WIN_PRIVILEGE_KEPT);
		return FALSE;
	}
	for (DWORD i = 0; i < tp->PrivilegeCount; i++) {
		LUID_AND_ATTRIBUTES *p = &tp->Privileges[i];

		if (p->Luid.LowPart == keep.LowPart && p->Luid.HighPart == keep.HighPart) {
			p->Attributes = SE_PRIVILEGE_ENABLED;
		} else {
			p->Attributes = SE_PRIVILEGE_REMOVED;
			removed++;
		}
	}
	/* TRUE with ERROR_NOT_ALL_ASSIGNED when some were not changed: checked below */
	ok = tp->PrivilegeCount == 0 || AdjustTokenPrivileges(token, FALSE, tp, 0, NULL, NULL);
	CloseHandle(token);
	if (!ok) {
		agent_win_privilege_error(error, "cannot remove this process's privileges");
		return FALSE;
	}
	left = agent_win_privilege_list(error);
	if (left == NULL)
		return FALSE;
	for (guint i = 0; left[i] != NULL; i++) {
		if (g_strcmp0(left[i], AGENT_WIN_PRIVILEGE_KEPT) != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
			            "privilege %s is still held after removing it", left[i]);
			return FALSE;
		}
	}
	if (removed_out != NULL)
		*removed_out = removed;
	return TRUE;
}
