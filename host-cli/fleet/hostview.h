/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/*
 * The host view of one guest: what its QEMU monitor (QMP) and the host's
 * /proc and /sys say about it. Collected asynchronously over QMP, then the
 * host files are read under a host sysroot ("/" unless --host-sysroot).
 *
 * The view (a JSON object; members may be added):
 *   "qmp", "pid", "qemu_version", "accel" ("kvm"|"tcg"|null), "memory_bytes",
 *   "block": [{"device" (QMP's name), "qdev", "disk" (the guest's name from the
 *     domain XML, "vda", else null), "serial", "driver", "file", "cache" ("none"|
 *     "writeback"|"unsafe"|"directsync"|"writethrough"), "writeback", "direct",
 *     "no_flush"}],
 *   "vcpus": [{"index", "thread_id", "cpus_allowed": [..], "nodes": [..]}],
 *   "host_nodes": [{"id", "cpus": [..]}], "host_cpus": N,
 *   "memory_nodes": [{"node", "bytes"}]   (numa_maps of the QEMU process),
 *   "memdevs": [{"id", "backend", "size", "policy", "host_nodes", "mem_path",
 *     "hugetlbfs"}],
 *   "hugepage_bytes" (smaps KernelPageSize > 4 kB), "hugepages" (bool),
 *   "host_cpu_flags": [..] (/proc/cpuinfo), "cpu_offer": {"model", "flags"},
 *   "libvirt": {..}|null, "remote_host": "hv1"|null, "local_only": "..."|null,
 *   "errors": ["what could not be read and why"]
 * "pid" is QEMU's: the socket's peer, or (through libvirt) the process of a
 * vCPU thread of query-cpus-fast when that process is QEMU; null remotely.
 */
typedef void (*CliHostviewFunc)(JsonNode *view, const GError *error, gpointer user_data);

typedef struct _CliHostviewJob CliHostviewJob;

/* func gets the view (borrowed) or the error that stopped the collection, once. */
CliHostviewJob *cli_hostview_job_new(const char *qmp_path, const char *sysroot,
                                     GMainContext *context, double timeout, CliHostviewFunc func,
                                     gpointer user_data);
/*
 * The same; uri is the libvirt connection of a "libvirt:DOMAIN" qmp_path
 * (NULL: the default). For a libvirt domain the view also has what libvirt
 * says: "libvirt": {"domain", "numatune": {"mode", "nodeset"}|null,
 * "hugepages", "emulator_cpus"}, the guest's disk names, and for a domain on
 * a remote hypervisor ("remote_host") the pinning from libvirt instead of
 * this host's /proc and /sys, which are never read for it ("local_only" says
 * what is missing).
 */
CliHostviewJob *cli_hostview_job_new_full(const char *qmp_path, const char *uri,
                                          const char *sysroot, GMainContext *context,
                                          double timeout, CliHostviewFunc func, gpointer user_data);
/* Stops the job; func is not called afterwards. */
void cli_hostview_job_free(CliHostviewJob *job);

/*
 * Pure part: the view from the QMP replies and the host files. replies maps a
 * command name ("query-block", "query-cpus-fast", "query-memdev", "query-kvm",
 * "query-memory-size-summary", "query-cpu-model-expansion") to its "return"
 * value, plus "memdev-props": {ID: {"type", "mem-path"}}, "errors":
 * {COMMAND: message} for optional commands that failed, and for a libvirt
 * domain "libvirt": {"domain", "xml" (its live XML), "host" (the remote
 * hypervisor, absent when local), "pinning": {"host_cpus", "vcpus": ["0-3",
 * ..], "emulator"}}. pid 0: found through a vCPU thread (not remotely). Anything malformed
 * ends up in the view's "errors"; never fails on hostile input.
 */
JsonNode *cli_hostview_build(JsonObject *replies, const char *qmp_path, gint64 pid,
                             const char *sysroot);

/*
 * For commands: collect the host view of guest over qmp_path with the app's
 * --host-sysroot and --timeout. func runs once, unless the guest finishes
 * first (then never); a job still running when the app is freed is stopped.
 */
void cli_hostview_collect_async(CliApp *app, CliGuest *guest, const char *qmp_path,
                                CliHostviewFunc func, gpointer user_data);
/* The QMP path for guest: --qmp with a single target, else NULL. */
const char *cli_hostview_get_qmp_path(CliApp *app, CliGuest *guest);

G_END_DECLS

G_BEGIN_DECLS
/* GOption callback for the common options --qmp and --host-sysroot (data: the CliApp). */
gboolean cli_option_host_cb(const char *option_name, const char *value, gpointer data,
                            GError **error);
/* Usage check once targets are known: --qmp needs exactly one target. */
gboolean cli_hostview_check_options(CliApp *app, GError **error);
G_END_DECLS
