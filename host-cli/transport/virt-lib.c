/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dlfcn.h>

#include "gb-error.h"

#include "transport/virt-lib.h"

const CliVirtLib *cli_virt_lib;

typedef struct {
	CliVirtLib lib;
	char *error; /* why loading failed, NULL when it did not */
} CliVirtLibLoad;

#define CLI_VIRT_LIB_INSTALL                                                              \
	"install it (Debian, Ubuntu, Proxmox VE: libvirt0; Fedora, "                      \
	"RHEL: libvirt-libs) to reach libvirt domains; every other target (unix:, qga:, " \
	"pve:, --libvirt-dir) works without it"

static void *cli_virt_lib_open(const char *env, const char *soname, char **error)
{
	const char *name = g_getenv(env);
	void *handle;

	if (name == NULL || name[0] == '\0')
		name = soname;
	/* global: libvirt-qemu.so.0 resolves its symbols in libvirt.so.0 */
	handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
	if (handle == NULL)
		*error = g_strdup_printf("libvirt's client library is not installed or cannot be "
		                         "loaded (%s): " CLI_VIRT_LIB_INSTALL,
		                         dlerror());
	return handle;
}

static gboolean cli_virt_lib_sym(void *handle, const char *lib, const char *name, void **slot,
                                 char **error)
{
	*slot = dlsym(handle, name);
	if (*slot == NULL && *error == NULL)
		*error =
		    g_strdup_printf("%s has no %s: this libvirt is older than guestbench needs "
		                    "(8.0 or later)",
		                    lib, name);
	return *slot != NULL;
}

static gpointer cli_virt_lib_load_once(gpointer data)
{
	CliVirtLibLoad *load = g_new0(CliVirtLibLoad, 1);
	void *core, *qemu;

	/* never closed: libvirt keeps threads and atexit handlers of its own */
	core = cli_virt_lib_open("GUESTBENCH_LIBVIRT_SONAME", CLI_VIRT_LIB_SONAME, &load->error);
	if (core == NULL)
		return load;
	qemu = cli_virt_lib_open("GUESTBENCH_LIBVIRT_QEMU_SONAME", CLI_VIRT_LIB_QEMU_SONAME,
	                         &load->error);
	if (qemu == NULL)
		return load;
#define CLI_VIRT_LIB_SYM_CORE(f) \
	cli_virt_lib_sym(core, CLI_VIRT_LIB_SONAME, #f, (void **)&load->lib.f, &load->error);
#define CLI_VIRT_LIB_SYM_QEMU(f) \
	cli_virt_lib_sym(qemu, CLI_VIRT_LIB_QEMU_SONAME, #f, (void **)&load->lib.f, &load->error);
	CLI_VIRT_LIB_CORE(CLI_VIRT_LIB_SYM_CORE)
	CLI_VIRT_LIB_QEMU(CLI_VIRT_LIB_SYM_QEMU)
#undef CLI_VIRT_LIB_SYM_CORE
#undef CLI_VIRT_LIB_SYM_QEMU
	if (load->error == NULL)
		g_atomic_pointer_set(&cli_virt_lib, &load->lib);
	return load;
}

const CliVirtLib *cli_virt_lib_load(GError **error)
{
	static GOnce once = G_ONCE_INIT;
	CliVirtLibLoad *load = g_once(&once, cli_virt_lib_load_once, NULL);

	if (load->error != NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED, load->error);
		return NULL;
	}
	return &load->lib;
}
