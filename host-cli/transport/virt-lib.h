/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * libvirt's client library, loaded at first use (dlopen) rather than linked:
 * the host CLI starts, and does everything that does not need libvirt, on a
 * machine without libvirt0 (a Proxmox VE node). Only transport/virt.c calls
 * libvirt, through VIR(function)(...), after cli_virt_lib_load() succeeded.
 * The headers (libvirt-dev) are needed to build, the library only to reach
 * libvirt domains.
 */

#include <glib.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

/* What the CLI calls in libvirt.so.0 ... */
#define CLI_VIRT_LIB_CORE(X)                 \
	X(virConnectClose)                   \
	X(virConnectGetURI)                  \
	X(virConnectIsAlive)                 \
	X(virConnectListAllDomains)          \
	X(virConnectOpen)                    \
	X(virConnectRef)                     \
	X(virConnectRegisterCloseCallback)   \
	X(virConnectSetKeepAlive)            \
	X(virConnectUnregisterCloseCallback) \
	X(virDomainFree)                     \
	X(virDomainGetEmulatorPinInfo)       \
	X(virDomainGetName)                  \
	X(virDomainGetState)                 \
	X(virDomainGetVcpuPinInfo)           \
	X(virDomainGetVcpusFlags)            \
	X(virDomainGetXMLDesc)               \
	X(virDomainIsActive)                 \
	X(virDomainLookupByName)             \
	X(virDomainOpenChannel)              \
	X(virEventAddHandle)                 \
	X(virEventAddTimeout)                \
	X(virEventRegisterDefaultImpl)       \
	X(virEventRemoveHandle)              \
	X(virEventRemoveTimeout)             \
	X(virEventRunDefaultImpl)            \
	X(virEventUpdateHandle)              \
	X(virGetLastErrorCode)               \
	X(virGetLastErrorMessage)            \
	X(virInitialize)                     \
	X(virNodeGetCPUMap)                  \
	X(virSetErrorFunc)                   \
	X(virStreamAbort)                    \
	X(virStreamEventAddCallback)         \
	X(virStreamEventRemoveCallback)      \
	X(virStreamEventUpdateCallback)      \
	X(virStreamFinish)                   \
	X(virStreamFree)                     \
	X(virStreamNew)                      \
	X(virStreamRecv)                     \
	X(virStreamSend)

/* ... and in libvirt-qemu.so.0. */
#define CLI_VIRT_LIB_QEMU(X)         \
	X(virDomainQemuAgentCommand) \
	X(virDomainQemuMonitorCommand)

#define CLI_VIRT_LIB_MEMBER(f) __typeof__(f) *f;
typedef struct {
	CLI_VIRT_LIB_CORE(CLI_VIRT_LIB_MEMBER)
	CLI_VIRT_LIB_QEMU(CLI_VIRT_LIB_MEMBER)
} CliVirtLib;
#undef CLI_VIRT_LIB_MEMBER

/* The sonames looked for; GUESTBENCH_LIBVIRT_SONAME and
 * GUESTBENCH_LIBVIRT_QEMU_SONAME override them (tests). */
#define CLI_VIRT_LIB_SONAME "libvirt.so.0"
#define CLI_VIRT_LIB_QEMU_SONAME "libvirt-qemu.so.0"

/*
 * Loads both libraries and every function once per process; later calls
 * return the same table or the same error ("libvirt's client library is not
 * installed ...: install libvirt0 ..."). Thread-safe.
 */
const CliVirtLib *cli_virt_lib_load(GError **error);

/* The table after a successful cli_virt_lib_load(); NULL before. */
extern const CliVirtLib *cli_virt_lib;
#define VIR(f) (cli_virt_lib->f)
