/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows agent's least privilege (agent/win32/privilege.h), under wine:
 * a process token as a LocalSystem service gets it (wine gives every process
 * about twenty privileges), emptied but for SeChangeNotifyPrivilege, and for
 * good: a removed privilege cannot be enabled again, nor does a child
 * process get it back.
 */
#include "config.h"

#include <windows.h>

#include "privilege.h"

static gboolean test_enable(const char *name)
{
	HANDLE token = NULL;
	TOKEN_PRIVILEGES tp = { .PrivilegeCount = 1 };
	BOOL ok;
	DWORD err;

	g_assert_true(LookupPrivilegeValueA(NULL, name, &tp.Privileges[0].Luid));
	tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
	g_assert_true(OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES, &token));
	ok = AdjustTokenPrivileges(token, FALSE, &tp, 0, NULL, NULL);
	err = GetLastError();
	CloseHandle(token);
	return ok && err == ERROR_SUCCESS;
}

static void test_drop(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) before = agent_win_privilege_list(&error);
	g_auto(GStrv) after = NULL;
	guint removed = 99;

	g_assert_no_error(error);
	/* what there is to drop: a token with more than the one kept */
	g_assert_cmpuint(g_strv_length(before), >, 1);
	g_assert_true(g_strv_contains((const char *const *)before, "SeDebugPrivilege"));
	g_assert_true(test_enable("SeDebugPrivilege"));

	g_assert_true(agent_win_privilege_drop(&removed, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(removed, ==, g_strv_length(before) - 1);
	after = agent_win_privilege_list(&error);
	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(after), ==, 1);
	g_assert_cmpstr(after[0], ==, "SeChangeNotifyPrivilege");
	/* removed, not disabled: it cannot be turned on again */
	g_assert_false(test_enable("SeDebugPrivilege"));
	g_assert_false(test_enable("SeBackupPrivilege"));

	/* a second drop finds nothing more to remove and still succeeds */
	g_assert_true(agent_win_privilege_drop(&removed, &error));
	g_assert_cmpuint(removed, ==, 0);
	g_assert_no_error(error);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/windows/privilege/drop", test_drop);
	return g_test_run();
}
