/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Proxmox VE: a node's VM configs, its custom CPU models and its cluster's
 * members, read as the files PVE writes them; nothing here talks to a guest
 * or runs a program.
 *
 * - ETC/qemu-server/VMID.conf (ETC/nodes/NODE/qemu-server/ for every node of
 *   the cluster): "key: value" lines; the running config is what comes before
 *   the first "[section]" (snapshots, [PENDING], [special:cloudinit]).
 * - ETC/virtual-guest/cpu-models.conf: "cpu-model: NAME" sections of
 *   indented "key value" lines (reported-model, flags, hidden, phys-bits...).
 * - ETC/.members: JSON, {"nodename", "nodelist": {NODE: {"id", "online", "ip"}}}.
 * - RUN/VMID.qmp (QMP), RUN/VMID.qga (qemu-ga, with agent: 1), RUN/VMID.pid.
 *
 * ETC is /etc/pve and RUN /var/run/qemu-server unless $GUESTBENCH_PVE_ETC or
 * $GUESTBENCH_PVE_RUN say otherwise (for tests, and for a copy of a node's
 * files).
 */

#define CLI_PVE_ETC_ENV "GUESTBENCH_PVE_ETC"
#define CLI_PVE_RUN_ENV "GUESTBENCH_PVE_RUN"
#define CLI_PVE_ETC_DEFAULT "/etc/pve"
#define CLI_PVE_RUN_DEFAULT "/var/run/qemu-server"
/* pmxcfs refuses files over 1 MiB; anything bigger is not PVE's. */
#define CLI_PVE_MAX_FILE_SIZE (1024 * 1024)
/* PVE's VMIDs are 100 .. 999999999. */
#define CLI_PVE_VMID_MIN 100
#define CLI_PVE_VMID_MAX 999999999u
/* PVE's default CPU type when a config has no cpu: line. */
#define CLI_PVE_DEFAULT_CPU "kvm64"
#define CLI_PVE_PORT_NAME "org.guestbench.agent.0"

typedef struct {
	char *key;    /* "scsi0" */
	char *value;  /* the line's value as written */
	char *bus;    /* "scsi", "virtio", "sata", "ide" */
	char *volume; /* "local-lvm:vm-100-disk-0", "none" */
	char *cache;  /* cache=, NULL when not set (PVE's default: no cache, i.e. none) */
	char *aio;    /* aio=, NULL when not set (io_uring) */
	gboolean iothread;
	gboolean cdrom; /* media=cdrom: not a disk */
} CliPveDisk;

typedef struct {
	char *key;   /* "net0" */
	char *value; /* the line's value as written */
	char *model; /* "virtio", "e1000", "vmxnet3", "rtl8139", ... */
	char *bridge;
	guint queues; /* 0: not set (one queue) */
} CliPveNic;

typedef struct {
	guint32 vmid;
	char *path;      /* the file read */
	char *name;      /* name:, NULL when absent */
	char *cpu;       /* the cpu: value as written, NULL when absent */
	char *cpu_type;  /* its type, "kvm64" when absent */
	char *cpu_flags; /* its flags= ("+aes;-pcid"), NULL when none */
	gboolean cpu_hidden;
	char *scsihw;     /* scsihw:, NULL when absent (PVE's default: lsi) */
	GPtrArray *disks; /* CliPveDisk, in file order */
	GPtrArray *nics;  /* CliPveNic, in file order */
	gboolean numa;
	char *hugepages;    /* "2", "1024", "any", NULL when absent */
	gboolean agent;     /* agent: 1 (or enabled=1) */
	guint cores;        /* 0 when absent (1) */
	guint sockets;      /* 0 when absent (1) */
	guint64 memory_mib; /* 0 when absent (512) */
	char *args;         /* args: as written, NULL when absent */
	/* our port, from args: (-chardev socket,server=on,path= + virtserialport name=) */
	char *port_socket;
	char *args_problem; /* why args: cannot be used (shell metacharacters, ...), NULL if fine */
	char **snapshots;   /* the [section] names after the running config, never NULL */
	char **unknown_keys; /* keys PVE does not know (it ignores them too), never NULL */
} CliPveVm;

typedef struct {
	char *name;
	char *ip; /* NULL when .members has none */
	guint id;
	gboolean online;
} CliPveNode;

typedef struct {
	char *local;      /* "nodename": this node */
	GPtrArray *nodes; /* CliPveNode, sorted by name */
} CliPveMembers;

typedef struct {
	char *name;           /* without "custom-" */
	char *reported_model; /* reported-model, "kvm64" when absent */
	char *flags;          /* flags as written ("+aes;+pclmulqdq"), NULL when none */
	gboolean hidden;
} CliPveCpuModel;

void cli_pve_vm_free(CliPveVm *vm);
void cli_pve_members_free(CliPveMembers *members);
void cli_pve_cpu_model_free(CliPveCpuModel *model);

/* ETC and RUN: the environment's, else PVE's own. */
const char *cli_pve_get_etc(void);
const char *cli_pve_get_run(void);

/* "100" -> 100; anything but a decimal VMID in PVE's range fails with a message quoting text. */
gboolean cli_pve_parse_vmid(const char *text, guint32 *out, GError **error);

/*
 * Parses a VM config (text of len bytes, not NUL-terminated necessarily); the
 * error (GB_ERROR_PARSE) names the VM and the line. A config that is not
 * UTF-8, has a NUL byte or a line that is not "key: value" fails.
 */
CliPveVm *cli_pve_vm_parse(guint32 vmid, const char *text, gsize len, GError **error);
/* Reads and parses ETC/qemu-server/VMID.conf (or path when not NULL). */
CliPveVm *cli_pve_vm_load(guint32 vmid, const char *path, GError **error);

/* Parses cpu-models.conf; a bad file fails. Returns CliPveCpuModel by name. */
GHashTable *cli_pve_cpu_models_parse(const char *text, gsize len, GError **error);
/* ETC/virtual-guest/cpu-models.conf; an absent file is an empty table. */
GHashTable *cli_pve_cpu_models_load(GError **error);

CliPveMembers *cli_pve_members_parse(const char *text, gsize len, GError **error);
/* ETC/.members; an absent file (a node outside a cluster) is NULL with no error. */
CliPveMembers *cli_pve_members_load(GError **error);
/* This node's name: .members' nodename, else the host name. */
char *cli_pve_local_node(void);

/*
 * The VMIDs with a config in dir (ETC/qemu-server or ETC/nodes/NODE/qemu-server),
 * sorted; names that are not VMID.conf are left out.
 */
GArray *cli_pve_list_vmids(const char *dir, GError **error);
/* The nodes under ETC/nodes, sorted. */
char **cli_pve_list_nodes(GError **error);

/* RUN/VMID.qmp, RUN/VMID.qga. */
char *cli_pve_qmp_path(guint32 vmid);
char *cli_pve_qga_path(guint32 vmid);
/* Whether RUN/VMID.pid names a live process. */
gboolean cli_pve_vm_is_running(guint32 vmid);

/*
 * A CPU type's flags that matter here, resolved as PVE resolves it: the
 * built-in x86-64-vN types' flags, custom-NAME through models (may be NULL)
 * and its reported-model, plus the VM's flags=. Sets *known FALSE for types
 * whose flags only QEMU knows (host, max, named models); level is the
 * x86-64 level the type gives (1..4, 0 when unknown).
 */
typedef struct {
	gboolean known;
	gboolean host; /* host or max: whatever the host has */
	gboolean aes;
	gboolean pclmulqdq;
	guint level;
	char *base;    /* the QEMU model it comes down to ("qemu64", "kvm64", "Haswell") */
	char *problem; /* custom-NAME not in cpu-models.conf, ... */
	char *flags;   /* the flags PVE's type or the custom model adds to base, NULL when none */
} CliPveCpu;
void cli_pve_cpu_resolve(const CliPveVm *vm, GHashTable *models, CliPveCpu *out);
void cli_pve_cpu_clear(CliPveCpu *cpu);

/* The "pve" member of the host view: the config as a fact (see hostview.h). */
JsonNode *cli_pve_vm_to_json(const CliPveVm *vm, GHashTable *models);

/* The args: line that adds our port to VMID, with its socket under RUN. */
char *cli_pve_port_args(guint32 vmid);

/*
 * PVE's x86-64 CPU types in order, each with the /proc/cpuinfo flags it needs
 * beyond the one before (kvm64 needs none here).
 */
#define CLI_PVE_N_CPU_TYPES 5
typedef struct {
	const char *type;
	guint level;
	const char *const flags[12];
} CliPveCpuType;
extern const CliPveCpuType cli_pve_cpu_types[CLI_PVE_N_CPU_TYPES];
/* The index in cli_pve_cpu_types of the highest type a CPU with these flags runs. */
guint cli_pve_cpu_rank(char **flags);
/* The index of a type's name, 0 (kvm64) when it is none of them. */
guint cli_pve_cpu_type_rank(const char *type);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliPveVm, cli_pve_vm_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliPveMembers, cli_pve_members_free)

G_END_DECLS
