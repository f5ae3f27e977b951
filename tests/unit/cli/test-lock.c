/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-target lock: where its directory is, which directories are refused, its key. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/lock.h"

/* An unprivileged uid that is not ours (nobody). */
#define OTHER_UID 65534

static char *make_tmp(void)
{
	g_autoptr(GError) error = NULL;
	char *dir = g_dir_make_tmp("gb-lock-XXXXXX", &error);
	g_assert_no_error(error);
	return dir;
}

static void remove_tree(const char *path)
{
	const char *argv[] = { "rm", "-rf", path, NULL };
	g_autoptr(GError) error = NULL;
	gint status = 0;

	g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
	             &status, &error);
	g_assert_no_error(error);
}

static void test_choose(void)
{
	g_autofree char *sub = NULL;
	g_autofree char *base = NULL;

	/* root: the system directory, whatever XDG_RUNTIME_DIR its login set */
	base = cli_lock_dir_choose(0, "/run/user/0", "/run", "/tmp", &sub);
	g_assert_cmpstr(base, ==, "/run");
	g_assert_cmpstr(sub, ==, "guestbench/locks");
	g_clear_pointer(&base, g_free);
	g_clear_pointer(&sub, g_free);

	base = cli_lock_dir_choose(1000, "/run/user/1000", "/run", "/tmp", &sub);
	g_assert_cmpstr(base, ==, "/run/user/1000");
	g_assert_cmpstr(sub, ==, "guestbench/locks");
	g_clear_pointer(&base, g_free);
	g_clear_pointer(&sub, g_free);

	/* no XDG_RUNTIME_DIR, or a relative one: a per-user directory under /tmp */
	base = cli_lock_dir_choose(1000, NULL, "/run", "/tmp", &sub);
	g_assert_cmpstr(base, ==, "/tmp");
	g_assert_cmpstr(sub, ==, "guestbench-1000/locks");
	g_clear_pointer(&base, g_free);
	g_clear_pointer(&sub, g_free);

	base = cli_lock_dir_choose(1000, "run/user", "/run", "/tmp", &sub);
	g_assert_cmpstr(base, ==, "/tmp");
	g_assert_cmpstr(sub, ==, "guestbench-1000/locks");
}

static void test_open_creates(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *want = g_build_filename(tmp, "guestbench-0", "locks", NULL);
	g_autofree char *parent = g_build_filename(tmp, "guestbench-0", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = NULL;
	CliLockDir *again;
	struct stat st;

	dir = cli_lock_dir_open(tmp, "guestbench-0/locks", geteuid(), &error);
	g_assert_no_error(error);
	g_assert_cmpstr(cli_lock_dir_get_path(dir), ==, want);
	g_assert_cmpint(stat(want, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 07777, ==, 0700);
	g_assert_cmpint(stat(parent, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 07777, ==, 0700);
	/* a second process finds the same directories and takes them */
	again = cli_lock_dir_open(tmp, "guestbench-0/locks", geteuid(), &error);
	g_assert_no_error(error);
	cli_lock_dir_free(again);
	remove_tree(tmp);
}

/* A directory that is not ours alone is refused, with its path and what is wrong. */
static void assert_refused(const char *tmp, const char *what)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = cli_lock_dir_open(tmp, "guestbench-0/locks", geteuid(), &error);

	g_assert_null(dir);
	g_assert_nonnull(error);
	g_test_message("%s", error->message);
	g_assert_nonnull(strstr(error->message, "refusing lock directory"));
	g_assert_nonnull(strstr(error->message, "guestbench-0"));
	g_assert_nonnull(strstr(error->message, what));
}

static void test_open_world_writable(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *planted = g_build_filename(tmp, "guestbench-0", NULL);

	g_assert_cmpint(g_mkdir(planted, 0700), ==, 0);
	g_assert_cmpint(chmod(planted, 0777), ==, 0);
	assert_refused(tmp, "writable by others (mode 0777");
	/* the inner one is checked the same way */
	g_assert_cmpint(chmod(planted, 0700), ==, 0);
	{
		g_autofree char *inner = g_build_filename(planted, "locks", NULL);
		g_assert_cmpint(g_mkdir(inner, 0700), ==, 0);
		g_assert_cmpint(chmod(inner, 0770), ==, 0);
		assert_refused(tmp, "mode 0770");
	}
	remove_tree(tmp);
}

static void test_open_other_owner(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *planted = g_build_filename(tmp, "guestbench-0", NULL);

	if (geteuid() != 0) {
		g_test_skip("needs root to give a directory to another user");
		remove_tree(tmp);
		return;
	}
	g_assert_cmpint(g_mkdir(planted, 0700), ==, 0);
	g_assert_cmpint(chown(planted, OTHER_UID, OTHER_UID), ==, 0);
	assert_refused(tmp, "owned by uid 65534, not 0");
	remove_tree(tmp);
}

static void test_open_symlink_and_file(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *elsewhere = g_build_filename(tmp, "elsewhere", NULL);
	g_autofree char *planted = g_build_filename(tmp, "guestbench-0", NULL);

	/* a symlink to a directory of ours is still not followed */
	g_assert_cmpint(g_mkdir(elsewhere, 0700), ==, 0);
	g_assert_cmpint(symlink(elsewhere, planted), ==, 0);
	assert_refused(tmp, "not a directory");
	g_assert_cmpint(unlink(planted), ==, 0);
	g_assert_true(g_file_set_contents(planted, "", 0, NULL));
	assert_refused(tmp, "not a directory");
	remove_tree(tmp);
}

/*
 * Which directory open_for() picks for uid. A uid that is not ours cannot
 * have its directories made by us: the refusal then names the one picked.
 */
static void assert_picks(uid_t uid, const char *xdg, const char *run, const char *tmpdir,
                         const char *want_first, const char *want)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = cli_lock_dir_open_for(uid, xdg, run, tmpdir, &error);

	if (uid == geteuid()) {
		g_assert_no_error(error);
		g_assert_cmpstr(cli_lock_dir_get_path(dir), ==, want);
		return;
	}
	g_assert_null(dir);
	g_assert_nonnull(error);
	g_test_message("%s", error->message);
	g_assert_nonnull(strstr(error->message, want_first));
	g_assert_nonnull(strstr(error->message, "owned by uid"));
}

static void test_open_for(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *run = g_build_filename(tmp, "run", NULL);
	g_autofree char *tmpdir = g_build_filename(tmp, "tmp", NULL);
	g_autofree char *xdg = g_build_filename(tmp, "xdg", NULL);
	/* the user: ourselves, or as root a user we can hand directories to */
	uid_t user = geteuid() == 0 ? OTHER_UID : geteuid();
	g_autofree char *user_dir = g_strdup_printf("guestbench-%u", (unsigned)user);
	g_autofree char *run_first = g_build_filename(run, "guestbench", NULL);
	g_autofree char *run_want = g_build_filename(run, "guestbench", "locks", NULL);
	g_autofree char *xdg_first = g_build_filename(xdg, "guestbench", NULL);
	g_autofree char *xdg_want = g_build_filename(xdg, "guestbench", "locks", NULL);
	g_autofree char *tmp_first = g_build_filename(tmpdir, user_dir, NULL);
	g_autofree char *tmp_want = g_build_filename(tmpdir, user_dir, "locks", NULL);

	g_assert_cmpint(g_mkdir(run, 0755), ==, 0);
	g_assert_cmpint(g_mkdir(tmpdir, 0777), ==, 0);
	g_assert_cmpint(chmod(tmpdir, 01777), ==, 0);
	g_assert_cmpint(g_mkdir(xdg, 0700), ==, 0);
	if (geteuid() == 0)
		g_assert_cmpint(chown(xdg, user, user), ==, 0);

	/* root: run_dir, even with an XDG_RUNTIME_DIR */
	assert_picks(0, xdg, run, tmpdir, run_first, run_want);
	/* a user: XDG_RUNTIME_DIR when it is theirs alone */
	assert_picks(user, xdg, run, tmpdir, xdg_first, xdg_want);
	/* ... not when others may write into it, nor without it */
	g_assert_cmpint(chmod(xdg, 0777), ==, 0);
	assert_picks(user, xdg, run, tmpdir, tmp_first, tmp_want);
	assert_picks(user, NULL, run, tmpdir, tmp_first, tmp_want);
	/* ... nor when it belongs to someone else */
	if (geteuid() == 0) {
		g_assert_cmpint(chmod(xdg, 0700), ==, 0);
		g_assert_cmpint(chown(xdg, 0, 0), ==, 0);
		assert_picks(user, xdg, run, tmpdir, tmp_first, tmp_want);
	}
	remove_tree(tmp);
}

static void test_key(void)
{
	g_autofree char *tmp = make_tmp();
	g_autofree char *sock = g_build_filename(tmp, "agent.sock", NULL);
	g_autofree char *link = g_build_filename(tmp, "link.sock", NULL);
	g_autofree char *dotted = g_build_filename(tmp, ".", "agent.sock", NULL);
	g_autofree char *want = g_strconcat("socket:", sock, NULL);
	g_autofree char *key_real = NULL;
	g_autofree char *key_link = NULL;
	g_autofree char *key_dotted = NULL;
	g_autofree char *key_qga = NULL;
	g_autofree char *key_missing = NULL;
	g_autofree char *key_vsock = NULL;
	g_autofree char *key_domain = NULL;
	g_autofree char *name = NULL;
	g_autofree char *missing = g_build_filename(tmp, "gone", "..", "none.sock", NULL);
	g_autofree char *missing_want = g_strconcat("socket:", tmp, "/none.sock", NULL);
	CliAddress address = { .kind = CLI_ADDRESS_UNIX, .text = "t" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	/* a real socket: its real path, however it is named */
	g_assert_cmpuint(strlen(sock), <, sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
	g_assert_cmpint(symlink(sock, link), ==, 0);
	address.path = sock;
	key_real = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_real, ==, want);
	address.path = link;
	key_link = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_link, ==, want);
	address.path = dotted;
	key_dotted = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_dotted, ==, want);
	/* qga: on the same socket is the same port */
	address.kind = CLI_ADDRESS_QGA;
	address.path = link;
	key_qga = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_qga, ==, want);
	/* not there (yet): still one name per path */
	address.kind = CLI_ADDRESS_UNIX;
	address.path = missing;
	key_missing = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_missing, ==, missing_want);

	address = (CliAddress){ .kind = CLI_ADDRESS_VSOCK, .cid = 42, .port = 5000 };
	key_vsock = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_vsock, ==, "vsock:42:5000");

	g_setenv("LIBVIRT_DEFAULT_URI", "qemu:///system", TRUE);
	address = (CliAddress){ .kind = CLI_ADDRESS_QGA_DOMAIN, .domain = "web1" };
	key_domain = cli_lock_key_for_address(&address);
	g_assert_cmpstr(key_domain, ==, "libvirt-qga:qemu:///system:web1");
	g_unsetenv("LIBVIRT_DEFAULT_URI");

	/* a file name of its own, whatever the key holds (slashes, dots) */
	name = cli_lock_file_name("socket:/../etc/passwd");
	g_assert_cmpuint(strlen(name), ==, 64 + strlen(".lock"));
	g_assert_true(g_str_has_suffix(name, ".lock"));
	g_assert_null(strchr(name, '/'));
	{
		g_autofree char *same = cli_lock_file_name("socket:/../etc/passwd");
		g_autofree char *other = cli_lock_file_name("socket:/../etc/passwd2");
		g_assert_cmpstr(name, ==, same);
		g_assert_cmpstr(name, !=, other);
	}
	close(fd);
	remove_tree(tmp);
}

static void test_try_busy_release(void)
{
	g_autofree char *tmp = make_tmp();
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = cli_lock_dir_open(tmp, "locks", geteuid(), &error);
	g_autoptr(CliLockHolder) holder = NULL;
	g_autofree char *name = cli_lock_file_name("socket:/x");
	g_autofree char *path = NULL;
	g_autofree char *content = NULL;
	g_autofree char *described = NULL;
	g_autofree char *pid_text = g_strdup_printf("pid %ld (", (long)getpid());
	const char *const command[] = {
		"guestbench", "bench", "aes", "a b", "evil\n\033[2J", NULL
	};
	CliLock *lock;
	CliLock *second;

	g_assert_no_error(error);
	path = g_build_filename(cli_lock_dir_get_path(dir), name, NULL);
	lock = cli_lock_try(dir, "socket:/x", command, &holder, &error);
	g_assert_no_error(error);
	g_assert_nonnull(lock);
	g_assert_null(holder);
	g_assert_true(g_file_get_contents(path, &content, NULL, NULL));
	g_test_message("%s", content);
	/* one line per field: the newline and escape of an argument are escaped */
	g_assert_nonnull(strstr(content, "command=guestbench bench aes 'a b' 'evil\\n\\033[2J'\n"));
	g_assert_nonnull(strstr(content, "key=socket:/x\n"));

	/* another open file (as another process would have) finds it busy, with who */
	second = cli_lock_try(dir, "socket:/x", NULL, &holder, &error);
	g_assert_no_error(error);
	g_assert_null(second);
	g_assert_nonnull(holder);
	g_assert_cmpint(holder->pid, ==, getpid());
	g_assert_cmpint(holder->since, >, 0);
	g_assert_cmpint(holder->since, <=, g_get_real_time() / G_USEC_PER_SEC);
	g_assert_cmpstr(holder->command, ==, "guestbench bench aes 'a b' 'evil\\n\\033[2J'");
	described = cli_lock_holder_describe(holder);
	g_test_message("%s", described);
	g_assert_true(g_str_has_prefix(described, pid_text));
	g_assert_nonnull(strstr(described, " since "));
	g_assert_nonnull(strstr(described, " s ago"));
	g_clear_pointer(&holder, cli_lock_holder_free);

	/* another key is another lock */
	second = cli_lock_try(dir, "socket:/y", NULL, &holder, &error);
	g_assert_no_error(error);
	g_assert_nonnull(second);
	cli_lock_release(second);

	/* released: the file is gone, the next one gets it */
	cli_lock_release(lock);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	second = cli_lock_try(dir, "socket:/x", NULL, &holder, &error);
	g_assert_no_error(error);
	g_assert_nonnull(second);
	cli_lock_release(second);
	remove_tree(tmp);
}

/* A holder that died keeps its file but not the lock. */
static void test_stale(void)
{
	g_autofree char *tmp = make_tmp();
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = cli_lock_dir_open(tmp, "locks", geteuid(), &error);
	g_autoptr(CliLockHolder) holder = NULL;
	g_autofree char *name = cli_lock_file_name("vsock:3:5000");
	g_autofree char *path = g_build_filename(cli_lock_dir_get_path(dir), name, NULL);
	int status = 0;
	pid_t child;
	CliLock *lock;

	g_assert_no_error(error);
	child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		CliLockHolder *h = NULL;
		CliLock *l = cli_lock_try(dir, "vsock:3:5000", NULL, &h, NULL);
		/* dies holding it: no release */
		_exit(l != NULL ? 0 : 1);
	}
	g_assert_cmpint(waitpid(child, &status, 0), ==, child);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
	lock = cli_lock_try(dir, "vsock:3:5000", NULL, &holder, &error);
	g_assert_no_error(error);
	g_assert_null(holder);
	g_assert_nonnull(lock);
	cli_lock_release(lock);
	remove_tree(tmp);
}

/* Whatever the file says, only well-formed fields are believed, and they stay printable. */
static void test_holder_garbage(void)
{
	g_autofree char *tmp = make_tmp();
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockDir) dir = cli_lock_dir_open(tmp, "locks", geteuid(), &error);
	g_autoptr(CliLockHolder) holder = NULL;
	g_autofree char *name = cli_lock_file_name("k");
	g_autofree char *path = g_build_filename(cli_lock_dir_get_path(dir), name, NULL);
	g_autofree char *described = NULL;
	CliLock *lock;
	int fd;

	g_assert_no_error(error);
	lock = cli_lock_try(dir, "k", NULL, &holder, &error);
	g_assert_nonnull(lock);
	g_assert_true(
	    g_file_set_contents(path, "pid=-5\nsince=yesterday\ncommand=a\tb\033c\n", -1, NULL));
	/* set_contents replaced the file: lock the new one from "another process" */
	fd = open(path, O_RDONLY);
	g_assert_cmpint(flock(fd, LOCK_EX), ==, 0);
	g_assert_null(cli_lock_try(dir, "k", NULL, &holder, &error));
	g_assert_no_error(error);
	g_assert_nonnull(holder);
	g_assert_cmpint(holder->pid, ==, 0);
	g_assert_cmpint(holder->since, ==, 0);
	g_assert_cmpstr(holder->command, ==, "a?b?c");
	described = cli_lock_holder_describe(holder);
	g_assert_cmpstr(described, ==, "another guestbench process (a?b?c)");
	close(fd);
	cli_lock_release(lock);
	remove_tree(tmp);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/lock/dir/choose", test_choose);
	g_test_add_func("/lock/dir/open-creates", test_open_creates);
	g_test_add_func("/lock/dir/world-writable", test_open_world_writable);
	g_test_add_func("/lock/dir/other-owner", test_open_other_owner);
	g_test_add_func("/lock/dir/symlink-and-file", test_open_symlink_and_file);
	g_test_add_func("/lock/dir/open-for", test_open_for);
	g_test_add_func("/lock/key", test_key);
	g_test_add_func("/lock/try-busy-release", test_try_busy_release);
	g_test_add_func("/lock/stale", test_stale);
	g_test_add_func("/lock/holder-garbage", test_holder_garbage);
	return g_test_run();
}
