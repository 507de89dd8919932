/* Kernel types ioshape's eBPF programs read, declared with only the fields
 * used. preserve_access_index makes every access a CO-RE relocation: the
 * loader finds each field's offset in the running kernel's BTF, so one
 * object runs on every kernel with BTF and these tracepoints. */
#pragma once

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)

/* uapi/linux/bpf.h values the programs use. */
enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};
enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};
enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};
enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};
enum {
	BPF_RB_AVAIL_DATA = 0,
};
enum {
	BPF_F_NO_PREALLOC = 1,
};

#define CORE __attribute__((preserve_access_index))

struct super_block {
	unsigned int s_dev;
} CORE;

struct inode {
	unsigned short i_mode;
	unsigned long i_ino;
	unsigned int i_generation;
	struct super_block *i_sb;
} CORE;

struct file {
	struct inode *f_inode;
	unsigned int f_flags;
	long long f_pos;
} CORE;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} CORE;

struct files_struct {
	struct fdtable *fdt;
} CORE;

/* include/linux/sched.h: the run time the scheduler counted; with
 * CONFIG_PARAVIRT_TIME_ACCOUNTING, without what the host took. */
struct sched_entity {
	__u64 sum_exec_runtime;
} CORE;

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	struct files_struct *files;
	char comm[16];
	struct sched_entity se;
} CORE;

/* include/linux/sched.h: a sleep that signals do not end — waiting for I/O,
 * a page, a journal commit, a throttled cgroup's turn. */
#define TASK_UNINTERRUPTIBLE 0x0002

struct gendisk {
	int major;
	int first_minor;
} CORE;

struct request_queue {
	struct gendisk *disk;
} CORE;

struct block_device {
	unsigned int bd_dev; /* dev_t, major << 20 | minor */
} CORE;

struct bvec_iter {
	unsigned long long bi_sector;
	unsigned int bi_size;
} CORE;

struct bio {
	struct block_device *bi_bdev;
	unsigned int bi_opf;
	struct bvec_iter bi_iter;
} CORE;

enum mq_rq_state {
	MQ_RQ_IDLE = 0,
	MQ_RQ_IN_FLIGHT = 1,
	MQ_RQ_COMPLETE = 2,
};

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	unsigned int __data_len;
	unsigned long long __sector;
	enum mq_rq_state state;
} CORE;

/* The context of a map-element iterator program (kernel/bpf/map_iter.c). */
struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
} CORE;

struct bpf_map;

struct bpf_iter__bpf_map_elem {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *key;
	void *value;
} CORE;

/* The REQ_* flag bits moved between kernel versions: their values are
 * relocated from the kernel's BTF with bpf_core_enum_value. */
enum req_flag_bits {
	__REQ_SYNC = 11,
	__REQ_META = 12,
	__REQ_FUA = 17,
	__REQ_PREFLUSH = 18,
	__REQ_RAHEAD = 19,
};

struct kiocb {
	long long ki_pos;
} CORE;

/* An io_kiocb begins with its opcode's command data: for reads and writes,
 * struct io_rw. */
struct io_rw {
	struct kiocb kiocb;
	__u64 addr;
	__u32 len;
} CORE;

struct io_cqe {
	__u64 user_data;
	__s32 res;
	union {
		__u32 flags;
		int fd;
	};
} CORE;

struct io_kiocb {
	__u8 opcode;
	unsigned long long flags;
	struct io_cqe cqe;
} CORE;

struct io_uring_cqe {
	__u64 user_data;
	__s32 res;
} CORE;

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long di, si, dx, r10, r8, r9;
	unsigned long orig_ax;
} CORE;
#define SYSCALL_ARG(regs, i)                                                                    \
	((i) == 0 ? BPF_CORE_READ(regs, di) : (i) == 1 ? BPF_CORE_READ(regs, si) :              \
	 (i) == 2 ? BPF_CORE_READ(regs, dx) : (i) == 3 ? BPF_CORE_READ(regs, r10) :             \
	 (i) == 4 ? BPF_CORE_READ(regs, r8) : BPF_CORE_READ(regs, r9))
#define SYSCALL_NR(regs) ((long)BPF_CORE_READ(regs, orig_ax))
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	unsigned long long regs[31];
} CORE;
struct pt_regs {
	struct user_pt_regs user_regs;
	unsigned long long orig_x0;
	int syscallno;
} CORE;
/* On arm64 the first argument register is overwritten by the return value;
 * the kernel keeps it in orig_x0. */
#define SYSCALL_ARG(regs, i) ((i) == 0 ? BPF_CORE_READ(regs, orig_x0) : BPF_CORE_READ(regs, user_regs.regs[(i) & 7]))
#define SYSCALL_NR(regs) ((long)BPF_CORE_READ(regs, syscallno))
#else
#error "ioshape's eBPF programs support x86_64 and arm64"
#endif
