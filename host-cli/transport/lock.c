/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb-error.h"

#include "transport/lock.h"

/* What a lock file may hold; the reader reads no more than this. */
#define CLI_LOCK_MAX_CONTENT 4096
/* A recorded command line longer than this is cut (it is only shown). */
#define CLI_LOCK_MAX_COMMAND 1024
/* Attempts when the file was removed between open() and flock() by a releasing holder. */
#define CLI_LOCK_MAX_ATTEMPTS 16

struct _CliLockDir {
	int fd;
	char *path;
};

struct _CliLock {
	int dir_fd; /* a dup of the directory's, for the unlink */
	int fd;
	char *name;
};

void cli_lock_holder_free(CliLockHolder *holder)
{
	if (holder == NULL)
		return;
	g_free(holder->command);
	g_free(holder);
}

char *cli_lock_holder_describe(const CliLockHolder *holder)
{
	GString *out = g_string_new(NULL);

	if (holder->pid > 0)
		g_string_append_printf(out, "pid %" G_GINT64_FORMAT, holder->pid);
	else
		g_string_append(out, "another guestbench process");
	if (holder->command != NULL && holder->command[0] != '\0')
		g_string_append_printf(out, " (%s)", holder->command);
	if (holder->since > 0) {
		g_autoptr(GDateTime) when = g_date_time_new_from_unix_local(holder->since);
		gint64 ago = MAX(g_get_real_time() / G_USEC_PER_SEC - holder->since, 0);

		if (when != NULL) {
			g_autofree char *text = g_date_time_format(when, "%Y-%m-%d %H:%M:%S");
			g_string_append_printf(out, " since %s, %" G_GINT64_FORMAT " s ago", text,
			                       ago);
		}
	}
	return g_string_free(out, FALSE);
}

char *cli_lock_dir_choose(uid_t euid, const char *xdg_runtime_dir, const char *run_dir,
                          const char *tmp_dir, char **sub)
{
	/* root shares one directory with the daily audit, whatever its login set */
	if (euid == 0) {
		*sub = g_strdup("guestbench/locks");
		return g_strdup(run_dir);
	}
	if (xdg_runtime_dir != NULL && g_path_is_absolute(xdg_runtime_dir)) {
		*sub = g_strdup("guestbench/locks");
		return g_strdup(xdg_runtime_dir);
	}
	*sub = g_strdup_printf("guestbench-%u/locks", (unsigned)euid);
	return g_strdup(tmp_dir);
}

/* A directory we make or use must be ours alone. */
static gboolean cli_lock_check_dir(const struct stat *st, const char *path, uid_t euid,
                                   GError **error)
{
	if (!S_ISDIR(st->st_mode)) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "refusing lock directory %s: not a directory", path);
		return FALSE;
	}
	if (st->st_uid != euid) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "refusing lock directory %s: owned by uid %u, not %u (remove it)", path,
		            (unsigned)st->st_uid, (unsigned)euid);
		return FALSE;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "refusing lock directory %s: writable by others (mode %04o, expected "
		            "0700)",
		            path, (unsigned)(st->st_mode & 07777));
		return FALSE;
	}
	return TRUE;
}

CliLockDir *cli_lock_dir_open(const char *base, const char *sub, uid_t euid, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(sub, "/", -1);
	g_autofree char *path = g_strdup(base);
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CliLockDir *dir;

	if (fd < 0) {
		int saved = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot open %s: %s", base,
		            g_strerror(saved));
		return NULL;
	}
	for (guint i = 0; parts[i] != NULL; i++) {
		struct stat st;
		char *next_path;
		int next;

		if (parts[i][0] == '\0')
			continue;
		next_path = g_build_filename(path, parts[i], NULL);
		g_free(path);
		path = next_path;
		if (mkdirat(fd, parts[i], 0700) != 0 && errno != EEXIST) {
			int saved = errno;
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "cannot create lock directory %s: %s", path, g_strerror(saved));
			close(fd);
			return NULL;
		}
		/* first by name, so that one we may not even open says whose it is */
		if (fstatat(fd, parts[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !cli_lock_check_dir(&st, path, euid, error)) {
			close(fd);
			return NULL;
		}
		/* O_NOFOLLOW: a symlink planted there fails instead of being followed */
		next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0) {
			int saved = errno;
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "refusing lock directory %s: %s",
			            path,
			            saved == ELOOP || saved == ENOTDIR ? "not a directory"
			                                               : g_strerror(saved));
			return NULL;
		}
		fd = next;
		if (fstat(fd, &st) != 0 || !cli_lock_check_dir(&st, path, euid, error)) {
			if (error != NULL && *error == NULL)
				g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot stat %s", path);
			close(fd);
			return NULL;
		}
	}
	dir = g_new0(CliLockDir, 1);
	dir->fd = fd;
	dir->path = g_steal_pointer(&path);
	return dir;
}

CliLockDir *cli_lock_dir_open_for(uid_t euid, const char *xdg_runtime_dir, const char *run_dir,
                                  const char *tmp_dir, GError **error)
{
	g_autofree char *sub = NULL;
	g_autofree char *base = NULL;
	struct stat st;

	/* a runtime directory that is not the user's own is no place for the user's locks */
	if (euid != 0 && xdg_runtime_dir != NULL && g_path_is_absolute(xdg_runtime_dir) &&
	    (stat(xdg_runtime_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != euid ||
	     (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
		g_debug("XDG_RUNTIME_DIR %s is not a directory of uid %u alone: using %s",
		        xdg_runtime_dir, (unsigned)euid, tmp_dir);
		xdg_runtime_dir = NULL;
	}
	base = cli_lock_dir_choose(euid, xdg_runtime_dir, run_dir, tmp_dir, &sub);
	return cli_lock_dir_open(base, sub, euid, error);
}

CliLockDir *cli_lock_dir_open_default(GError **error)
{
	return cli_lock_dir_open_for(geteuid(), g_getenv("XDG_RUNTIME_DIR"), "/run", "/tmp", error);
}

const char *cli_lock_dir_get_path(const CliLockDir *dir)
{
	return dir->path;
}

void cli_lock_dir_free(CliLockDir *dir)
{
	if (dir == NULL)
		return;
	close(dir->fd);
	g_free(dir->path);
	g_free(dir);
}

static char *cli_lock_socket_path(const char *path)
{
	char *real = realpath(path, NULL);
	char *out;

	/* a socket that is not there yet still gets one name however it is spelled */
	if (real == NULL)
		return g_canonicalize_filename(path, NULL);
	out = g_strdup(real);
	free(real);
	return out;
}

char *cli_lock_key_for_address(const CliAddress *address)
{
	switch (address->kind) {
	case CLI_ADDRESS_VSOCK:
		return g_strdup_printf("vsock:%u:%u", address->cid, address->port);
	case CLI_ADDRESS_QGA_DOMAIN:
	case CLI_ADDRESS_LIBVIRT: {
		/* NULL is libvirt's default connection, as libvirt picks it */
		const char *uri =
		    address->uri != NULL ? address->uri : g_getenv("LIBVIRT_DEFAULT_URI");
		return g_strdup_printf(
		    "%s:%s:%s", address->kind == CLI_ADDRESS_LIBVIRT ? "libvirt" : "libvirt-qga",
		    uri != NULL ? uri : "", address->domain != NULL ? address->domain : "");
	}
	case CLI_ADDRESS_UNIX:
	case CLI_ADDRESS_QGA:
	default: {
		g_autofree char *path =
		    cli_lock_socket_path(address->path != NULL ? address->path : "");
		return g_strconcat("socket:", path, NULL);
	}
	}
}

char *cli_lock_file_name(const char *key)
{
	g_autofree char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
	return g_strconcat(digest, ".lock", NULL);
}

/* The command line on one line of printable ASCII (g_strescape), at most CLI_LOCK_MAX_COMMAND. */
static char *cli_lock_format_command(const char *const *command)
{
	g_autoptr(GString) line = g_string_new(NULL);
	g_autofree char *escaped = NULL;

	for (guint i = 0; command != NULL && command[i] != NULL; i++) {
		g_autofree char *valid = g_utf8_make_valid(command[i], -1);
		g_autofree char *quoted = g_shell_quote(valid);

		if (i > 0)
			g_string_append_c(line, ' ');
		/* plain words stay plain, the rest quoted as a shell would need */
		if (valid[0] != '\0' && strpbrk(valid, " \t\n'\"\\$`*?[]{}()<>|&;#~!") == NULL)
			g_string_append(line, valid);
		else
			g_string_append(line, quoted);
	}
	escaped = g_strescape(line->str, NULL);
	if (strlen(escaped) > CLI_LOCK_MAX_COMMAND)
		strcpy(escaped + CLI_LOCK_MAX_COMMAND - 3, "...");
	return g_steal_pointer(&escaped);
}

/* What the holder wrote; anything odd in it is dropped, never trusted. */
static CliLockHolder *cli_lock_read_holder(int fd)
{
	char buf[CLI_LOCK_MAX_CONTENT + 1];
	ssize_t n = pread(fd, buf, CLI_LOCK_MAX_CONTENT, 0);
	CliLockHolder *holder = g_new0(CliLockHolder, 1);
	g_auto(GStrv) lines = NULL;

	if (n <= 0)
		return holder;
	buf[n] = '\0';
	lines = g_strsplit(buf, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		const char *line = lines[i];
		gint64 value = 0;

		if (g_str_has_prefix(line, "pid=")) {
			if (g_ascii_string_to_signed(line + 4, 10, 1, G_MAXINT32, &value, NULL))
				holder->pid = value;
		} else if (g_str_has_prefix(line, "since=")) {
			if (g_ascii_string_to_signed(line + 6, 10, 1, G_MAXINT64 / G_USEC_PER_SEC,
			                             &value, NULL))
				holder->since = value;
		} else if (g_str_has_prefix(line, "command=") && holder->command == NULL) {
			GString *cmd = g_string_new(NULL);

			for (const char *p = line + 8;
			     *p != '\0' && cmd->len < CLI_LOCK_MAX_COMMAND; p++)
				g_string_append_c(cmd, g_ascii_isprint(*p) ? *p : '?');
			holder->command = g_string_free(cmd, FALSE);
		}
	}
	return holder;
}

static gboolean cli_lock_write_holder(int fd, const char *key, const char *const *command,
                                      GError **error)
{
	g_autofree char *cmd = cli_lock_format_command(command);
	g_autofree char *escaped_key = g_strescape(key, NULL);
	g_autofree char *text =
	    g_strdup_printf("pid=%ld\nsince=%" G_GINT64_FORMAT "\nkey=%s\ncommand=%s\n",
	                    (long)getpid(), g_get_real_time() / G_USEC_PER_SEC, escaped_key, cmd);
	gsize len = strlen(text);

	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, len, 0) != (ssize_t)len) {
		int saved = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write the lock file: %s",
		            g_strerror(saved));
		return FALSE;
	}
	return TRUE;
}

CliLock *cli_lock_try(CliLockDir *dir, const char *key, const char *const *command,
                      CliLockHolder **holder, GError **error)
{
	g_autofree char *name = cli_lock_file_name(key);

	*holder = NULL;
	for (guint attempt = 0; attempt < CLI_LOCK_MAX_ATTEMPTS; attempt++) {
		struct stat st_fd;
		struct stat st_path;
		CliLock *lock;
		int fd = openat(dir->fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0) {
			int saved = errno;
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot open lock file %s/%s: %s",
			            dir->path, name, g_strerror(saved));
			return NULL;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int saved = errno;

			if (saved == EWOULDBLOCK) {
				*holder = cli_lock_read_holder(fd);
				close(fd);
				return NULL;
			}
			close(fd);
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot lock %s/%s: %s",
			            dir->path, name, g_strerror(saved));
			return NULL;
		}
		/* the holder before us removed the file after we opened it: lock the new one */
		if (fstat(fd, &st_fd) != 0 ||
		    fstatat(dir->fd, name, &st_path, AT_SYMLINK_NOFOLLOW) != 0 ||
		    st_fd.st_dev != st_path.st_dev || st_fd.st_ino != st_path.st_ino) {
			close(fd);
			continue;
		}
		if (!cli_lock_write_holder(fd, key, command, error)) {
			unlinkat(dir->fd, name, 0);
			close(fd);
			return NULL;
		}
		lock = g_new0(CliLock, 1);
		lock->fd = fd;
		lock->dir_fd = fcntl(dir->fd, F_DUPFD_CLOEXEC, 0);
		lock->name = g_steal_pointer(&name);
		return lock;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot lock %s/%s: it keeps being replaced",
	            dir->path, name);
	return NULL;
}

void cli_lock_release(CliLock *lock)
{
	if (lock == NULL)
		return;
	/* removed while still locked: whoever opened it meanwhile sees it is gone and retries */
	if (lock->dir_fd >= 0) {
		if (unlinkat(lock->dir_fd, lock->name, 0) != 0)
			g_debug("cannot remove lock file %s: %s", lock->name, g_strerror(errno));
		close(lock->dir_fd);
	}
	close(lock->fd);
	g_free(lock->name);
	g_free(lock);
}
