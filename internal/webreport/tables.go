package webreport

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
)

// maxProcessRows keeps the process table readable; the rest are summed.
const maxProcessRows = 30

func busiest(maps []profile.OffsetMap, n int) []profile.OffsetMap {
	out := append([]profile.OffsetMap(nil), maps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].IOs > out[j].IOs })
	return out[:n]
}

func writeMixture(b *strings.Builder, a *report.Analysis) {
	c := a.Class
	if len(c.Mixture) > 0 {
		b.WriteString(`<h3>Mixture</h3><table><tr><th>pattern</th><th>family</th><th class="num">bytes</th><th class="num">time</th></tr>`)
		for _, m := range c.Mixture {
			fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td></tr>`,
				esc(m.Name), esc(m.Family), esc(report.Percent(m.BytesShare)), esc(report.Percent(m.TimeShare)))
		}
		b.WriteString(`</table>`)
	}
	if len(c.Phases) > 0 {
		b.WriteString(`<h3>Phases</h3><table><tr><th>from</th><th>to</th><th>shape</th><th>best match</th><th class="num">score</th></tr>`)
		for _, p := range c.Phases {
			fmt.Fprintf(b, `<tr><td class="num">%s s</td><td class="num">%s s</td><td>%s, %s, QD %s, %s reads</td><td>%s</td><td class="num">%.2f</td></tr>`,
				esc(report.Num(p.StartS, 2)), esc(report.Num(p.EndS, 2)), esc(p.Shape.Access), esc(report.Bytes(p.Shape.BlockSizeBytes)),
				esc(report.Num(p.Shape.QueueDepth, 1)), esc(report.Percent(p.Shape.ReadFraction)), esc(p.Best.Name), p.Best.Score)
		}
		b.WriteString(`</table>`)
	}
}

func writeDrive(b *strings.Builder, a *report.Analysis) {
	d := a.Class.Drive
	title := "What this means for your drive"
	if d.Drive != "" {
		title += " (" + d.Drive + ")"
	}
	fmt.Fprintf(b, `<h3>%s</h3><table><tr><th>share of the work</th><th class="num">bytes</th><th>drive result used</th><th class="num">MB/s</th><th class="num">match</th><th class="num">time</th></tr>`, esc(title))
	for _, c := range d.Components {
		fmt.Fprintf(b, `<tr><td>%s</td><td class="num">%s</td><td>%s</td><td class="num">%s</td><td class="num">%.2f</td><td class="num">%s</td></tr>`,
			esc(c.Pattern), esc(report.Bytes(c.Bytes)), esc(c.ResultName), esc(report.Num(c.ResultMBs, 0)), c.ResultMatch, esc(report.Micros(c.TimeS*1e6)))
	}
	fmt.Fprintf(b, `</table><p>Estimate: <b>%s MB/s</b>, %s (%s at the drive + %s of gaps no drive shortens); recorded: %s.</p>`,
		esc(report.Num(d.ThroughputMBs, 0)), esc(report.Micros(d.DurationS*1e6)), esc(report.Micros(d.DeviceS*1e6)),
		esc(report.Micros(d.ThinkS*1e6)), esc(report.Micros(d.TraceDurationS*1e6)))
}

func writeProcesses(b *strings.Builder, a *report.Analysis) {
	procs := a.Show.Processes
	if len(procs) == 0 {
		return
	}
	b.WriteString(`<h2>Processes</h2><table id="processes"><tr><th class="num">pid</th><th>command</th><th class="num">I/Os asked</th><th class="num">read asked</th><th class="num">written asked</th><th class="num">I/Os at drive</th><th class="num">read at drive</th><th class="num">written at drive</th></tr>`)
	var rest profile.Process
	for i, p := range procs {
		if i >= maxProcessRows {
			rest.SyscallIOs += p.SyscallIOs
			rest.SyscallReadBytes += p.SyscallReadBytes
			rest.SyscallWriteBytes += p.SyscallWriteBytes
			rest.BlockIOs += p.BlockIOs
			rest.BlockReadBytes += p.BlockReadBytes
			rest.BlockWriteBytes += p.BlockWriteBytes
			continue
		}
		comm := esc(p.Comm)
		if p.Kernel {
			comm += ` <span class="muted">(kernel)</span>`
		}
		processRow(b, fmt.Sprint(p.Pid), comm, p)
	}
	if len(procs) > maxProcessRows {
		processRow(b, "", fmt.Sprintf("%d more", len(procs)-maxProcessRows), rest)
	}
	b.WriteString(`</table>`)
}

func processRow(b *strings.Builder, pid, comm string, p profile.Process) {
	fmt.Fprintf(b, `<tr><td class="num">%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td></tr>`,
		pid, comm, report.Count(p.SyscallIOs), esc(report.Bytes(p.SyscallReadBytes)), esc(report.Bytes(p.SyscallWriteBytes)),
		report.Count(p.BlockIOs), esc(report.Bytes(p.BlockReadBytes)), esc(report.Bytes(p.BlockWriteBytes)))
}

func writeDevices(b *strings.Builder, a *report.Analysis) {
	devs := a.Show.Devices
	if len(devs) == 0 {
		return
	}
	b.WriteString(`<h2>Devices</h2><table><tr><th>device</th><th>mount</th><th>layer</th><th class="num">I/Os</th><th class="num">bytes</th><th class="num">QD p50</th><th class="num">latency p50 / p99</th><th class="num">sequential</th></tr>`)
	for _, d := range devs {
		for _, x := range []struct {
			name string
			l    *profile.Layer
		}{{"asked", d.Syscall}, {"drive", d.Block}} {
			if x.l == nil || x.l.IOs == 0 {
				continue
			}
			fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s / %s</td><td class="num">%s</td></tr>`,
				esc(d.Device), esc(d.Mount), x.name, report.Count(x.l.IOs), esc(report.Bytes(x.l.ReadBytes+x.l.WriteBytes)),
				esc(report.Num(x.l.QueueDepth.P50, 1)), esc(report.Micros(x.l.LatencyUs.P50)), esc(report.Micros(x.l.LatencyUs.P99)),
				esc(report.Percent(x.l.SequentialFraction)))
		}
	}
	b.WriteString(`</table>`)
}
