/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "transport/address.h"

G_BEGIN_DECLS

/*
 * One client per guest port. A virtio-serial port (and qemu-ga's socket)
 * serves one connection at a time: a second client is not refused, it just
 * gets no answer until the first one is gone. guestbench processes of one
 * host therefore take an advisory lock (flock(2)) per target before they
 * connect and keep it until they are done with the guest; a second process
 * sees who holds it instead of timing out.
 *
 * The lock files live in a directory of the user's own:
 *   root:                       /run/guestbench/locks (also the daily audit's)
 *   others, XDG_RUNTIME_DIR:    $XDG_RUNTIME_DIR/guestbench/locks
 *   others, without it:         /tmp/guestbench-UID/locks
 * Every directory guestbench creates there is mode 0700 and must belong to
 * the user and be writable by nobody else; one that is not is refused. A lock
 * file is named after a digest of the target's identity (the socket's real
 * path, vsock CID:port, or the libvirt domain), never placed next to the
 * socket, and holds the holder's pid, start time and command line. The
 * holder removes it when it is done; the kernel drops the lock of a process
 * that died, so a file left behind never blocks anyone.
 */

/* Who holds a lock, as its file says (fields may be 0 or NULL when it did not say). */
typedef struct {
	gint64 pid;
	gint64 since;  /* unix time in seconds */
	char *command; /* the holder's command line, escaped: printable ASCII only */
} CliLockHolder;

void cli_lock_holder_free(CliLockHolder *holder);
/* "pid 1234 (guestbench bench aes SOCK) since 2026-01-02 03:04:05, 7 s ago" */
char *cli_lock_holder_describe(const CliLockHolder *holder);

typedef struct _CliLockDir CliLockDir;

/*
 * The directory lock files go to (see above), as base (not created, not
 * checked: /run, $XDG_RUNTIME_DIR, /tmp) and the components made under it.
 * Returns base; *sub is "guestbench/locks" or "guestbench-UID/locks".
 * xdg_runtime_dir is ignored for root, and when it is not absolute.
 */
char *cli_lock_dir_choose(uid_t euid, const char *xdg_runtime_dir, const char *run_dir,
                          const char *tmp_dir, char **sub);
/*
 * Opens base/sub, making each component of sub (mode 0700) and refusing one
 * that is not a directory, belongs to another user or is writable by group
 * or others.
 */
CliLockDir *cli_lock_dir_open(const char *base, const char *sub, uid_t euid, GError **error);
/*
 * cli_lock_dir_choose() then cli_lock_dir_open(); an XDG_RUNTIME_DIR that is
 * not the user's own (other owner, writable by others) is passed over for
 * tmp_dir.
 */
CliLockDir *cli_lock_dir_open_for(uid_t euid, const char *xdg_runtime_dir, const char *run_dir,
                                  const char *tmp_dir, GError **error);
/* For this process: geteuid(), $XDG_RUNTIME_DIR, /run, /tmp. */
CliLockDir *cli_lock_dir_open_default(GError **error);
const char *cli_lock_dir_get_path(const CliLockDir *dir);
void cli_lock_dir_free(CliLockDir *dir);

/*
 * What identifies the port behind an address: "socket:" and the socket's
 * real path (direct and qga: targets alike, libvirt: ones resolve to their
 * channel's socket), "vsock:CID:PORT", "libvirt-qga:URI:DOMAIN".
 */
char *cli_lock_key_for_address(const CliAddress *address);
/* The lock file's name for a key: a SHA-256 of it, hex, and ".lock". */
char *cli_lock_file_name(const char *key);

typedef struct _CliLock CliLock;

/*
 * Tries once, without blocking. Returns the lock, or NULL with *holder set
 * when another open file holds it (busy, error not set), or NULL with error.
 * command (may be NULL) is recorded for whoever finds it busy.
 */
CliLock *cli_lock_try(CliLockDir *dir, const char *key, const char *const *command,
                      CliLockHolder **holder, GError **error);
/* Removes the lock file and releases the lock. */
void cli_lock_release(CliLock *lock);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliLockHolder, cli_lock_holder_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliLockDir, cli_lock_dir_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliLock, cli_lock_release)

G_END_DECLS
