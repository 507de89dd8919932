/*
 * ioshape's DTrace script, for macOS and any DTrace with the standard io
 * and syscall providers (FreeBSD, illumos, Oracle DTrace on Linux). Run
 * with -Z so that probes one system lacks (the _nocancel variants outside
 * macOS, clonefileat) do not stop the others.
 *
 * This file is a Go text/template: ioshape fills in the platform, the
 * target predicate and the platform's system calls, and leaves out the io
 * provider when System Integrity Protection hides it. Facts relied on are
 * in the DTrace Guide (io and syscall providers), xnu's bsd/sys/buf.h and
 * Oracle DTrace for Linux's documentation.
 *
 * One line per completed I/O (comm last: it may hold spaces):
 *   READY dtrace <timestamp> <platform> <walltimestamp>
 *       tracing has begun; the platform (darwin, linux) says how to read
 *       block numbers (device blocks on macOS, 512-byte sectors on Linux);
 *       walltimestamp (ns since 1970) dates the trace
 *   I start done major minor blkno bcount bytes error flags pid tid comm
 *       block layer, io:::start to io:::done; bcount is b_bcount at
 *       io:::start, the request's size, kept per request; bytes is
 *       b_bcount - b_resid at io:::done, which on Linux describes only the
 *       last part of a request the kernel split, so sizes come from bcount;
 *       flags are ioshape's: 1 read, 2 async, 4 physical (uncached),
 *       8 paging, 16 metadata, 32 FUA — tested with the running system's
 *       own B_* constants, whose values differ (B_READ is 0x1 on macOS,
 *       0x40 on Linux)
 *   C call entry return pid tid fd size offset ret errno comm
 *       syscall layer, entry to return; call is the platform's name without
 *       "_nocancel"; size and offset are -1 where the call has none; a
 *       libaio io_submit prints aio_read/aio_write with its first iocb's fd,
 *       size and offset and the number submitted, io_getevents the number
 *       reaped
 *   @unmatched: N    io:::done without its io:::start, at exit
 *   @unfinished: N   io:::start without its io:::done, at exit
 *
 * Times are `timestamp` (ns). Scripts before the platform word printed
 * b_flags raw; the importer recognises those.
 */

#pragma D option quiet
/* Drain often and keep large buffers and dynamic variable space, so a
 * burst of I/O is not dropped (the DTrace Guide's remedies for drops). */
#pragma D option switchrate=10hz
#pragma D option bufsize=16m
#pragma D option dynvarsize=64m
#pragma D option cleanrate=101hz

/* BEGIN fires once every probe is enabled: the recorder starts the
 * command only then. Its timestamp is the trace's time zero. */
dtrace:::BEGIN
{
	printf("READY dtrace %d {{.Platform}} %d\n", timestamp, walltimestamp);
}
{{- if .Block}}

/*
 * The buf pointer (arg0) is the request: every io probe's arguments are
 * translated from it. Issuer, flags, block and size are taken at start,
 * where pid and execname are the issuing thread's; at done they are the
 * completing context's (kernel_task). Every start is remembered, tracked or
 * not, so that a done without a start really is unmatched. Kernel-issued
 * I/O (pid 0 on macOS: delayed writes, page-outs; kworker threads on
 * Linux, which the parser knows by name) is kept and marked.
 */
io:::start
{
	io_ts[arg0] = timestamp;
	io_tracked[arg0] = (({{.Filter}}) || pid == 0) ? 1 : 0;
	io_pid[arg0] = pid;
	io_tid[arg0] = tid;
	io_comm[arg0] = execname;
	io_flags[arg0] = ((args[0]->b_flags & B_READ) ? 1 : 0) |
	    ((args[0]->b_flags & B_ASYNC) ? 2 : 0) |
	    ((args[0]->b_flags & B_PHYS) ? 4 : 0) |
	    ((args[0]->b_flags & B_PAGEIO) ? 8 : 0){{if eq .Platform "darwin"}} |
	    ((args[0]->b_flags & 0x0100) ? 16 : 0) |	/* xnu B_META */
	    ((args[0]->b_flags & 0x0400) ? 32 : 0){{end}};	/* xnu B_FUA */
	io_blkno[arg0] = args[0]->b_blkno;
	io_bcount[arg0] = args[0]->b_bcount;
	io_major[arg0] = args[1]->dev_major;
	io_minor[arg0] = args[1]->dev_minor;
}

/* A request still in flight at the end (or whose done this DTrace dropped)
 * is counted: +1 here, -1 at its done. */
io:::start
/io_tracked[arg0]/
{
	@unfinished = sum(1);
}

io:::done
/io_ts[arg0] && io_tracked[arg0]/
{
	@unfinished = sum(-1);
	printf("I %d %d %d %d %d %d %d %d %d %d %d %s\n",
	    io_ts[arg0], timestamp, io_major[arg0], io_minor[arg0], io_blkno[arg0],
	    io_bcount[arg0], args[0]->b_bcount - args[0]->b_resid, args[0]->b_error,
	    io_flags[arg0], io_pid[arg0], io_tid[arg0], io_comm[arg0]);
}

io:::done
/io_ts[arg0] == 0/
{
	@unmatched = count();
}

/* bufs are reused: always clear the request at done. */
io:::done
/io_ts[arg0]/
{
	io_ts[arg0] = 0;
	io_tracked[arg0] = 0;
	io_pid[arg0] = 0;
	io_tid[arg0] = 0;
	io_comm[arg0] = 0;
	io_flags[arg0] = 0;
	io_blkno[arg0] = 0;
	io_bcount[arg0] = 0;
	io_major[arg0] = 0;
	io_minor[arg0] = 0;
}
{{- end}}
{{range .Calls}}
syscall::{{.Name}}:entry{{if .Nocancel}},
syscall::{{.Name}}_nocancel:entry{{end}}
/({{$.Filter}}){{if .When}} && ({{.When}}){{end}}/
{
{{- if .Pre}}
	{{.Pre}}
{{- end}}
	self->ts = timestamp;
	self->call = {{.Call}};
	self->fd = (int64_t)({{.FD}});
	self->size = (int64_t)({{.Size}});
	self->off = (int64_t)({{.Offset}});
{{- if .FD2}}
	self->fd2 = (int64_t)({{.FD2}});
{{- end}}
}
{{end}}
{{- range .Calls}}{{if .FD2}}
/* {{.Name}} moves data from one descriptor to another: the source half
 * first, as a read, then the call itself as the write. */
syscall::{{.Name}}:return
/self->ts/
{
	printf("C {{.Name}}_src %d %d %d %d %d %d %d %d %d %s\n",
	    self->ts, timestamp, pid, tid, self->fd2, self->size,
	    (int64_t)-1, (int64_t)arg0, errno, execname);
	self->fd2 = 0;
}
{{end}}{{end}}
{{- range $i, $c := .Calls}}{{if $i}},
{{end}}syscall::{{$c.Name}}:return{{if $c.Nocancel}},
syscall::{{$c.Name}}_nocancel:return{{end}}{{end}}
/self->ts/
{
	/* At return, arg0 and arg1 are the return value; errno is the call's. */
	printf("C %s %d %d %d %d %d %d %d %d %d %s\n",
	    self->call, self->ts, timestamp, pid, tid, self->fd, self->size,
	    self->off, (int64_t)arg0, errno, execname);
	self->ts = 0;
	self->call = 0;
	self->fd = 0;
	self->size = 0;
	self->off = 0;
}

{{- if .Block}}

dtrace:::END
{
	printa("@unmatched: %@d\n", @unmatched);
	printa("@unfinished: %@d\n", @unfinished);
}
{{- end}}
