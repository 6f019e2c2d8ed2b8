package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The Doctor screen: doctor's findings, judged after each complete scan from
// what that scan read (no second pass over the keyspace) and one read of
// the server's INFO (and CONFIG GET until the ACL refuses it once).

// doctorRun rides on one scan.
type doctorRun struct {
	snap *inspect.SnapshotBuilder
	pass *doctor.Pass
}

// doctorMsg brings a finished judgement.
type doctorMsg struct {
	gen    int
	report doctor.Report
	config bool // CONFIG GET answered: ask again next time
}

// newDoctorRun starts the doctor's share of a scan, or nil without a doctor.
func (m *Model) newDoctorRun() *doctorRun {
	if m.opts.Doctor == nil {
		return nil
	}
	return &doctorRun{snap: inspect.NewSnapshotBuilder(m.opts.Keyspaces, 10), pass: doctor.NewPass(*m.opts.Doctor)}
}

// observe folds a batch in.
func (d *doctorRun) observe(b inspect.Batch) {
	if d == nil {
		return
	}
	d.snap.Add(b)
	for i := range b.Records {
		d.pass.Observe(&b.Records[i])
	}
}

// judge finishes in the background once the scan is complete.
func (d *doctorRun) judge(ctx context.Context, gen int, c redis.UniversalClient, kss []*inspect.Keyspace, covs []inspect.Coverage, withConfig bool, offline *inspect.SnapshotSource) tea.Cmd {
	if d == nil {
		return nil
	}
	return func() tea.Msg {
		snap := d.snap.Finish(ctx, c, covs)
		var srv doctor.Server
		if offline != nil {
			srv = doctor.SnapshotServer(offline.Info().String())
		} else {
			srv = doctor.ReadServer(ctx, c, withConfig)
		}
		return doctorMsg{gen: gen, report: d.pass.Judge(&srv, &snap, kss), config: withConfig && !srv.ConfigRefused}
	}
}

// onDoctor keeps the newest judgement.
func (m *Model) onDoctor(msg doctorMsg) {
	m.doctorReport, m.doctorAt = &msg.report, m.now()
	m.doctorNoConfig = !msg.config
}

// doctorSummary is the Overview's pointer to the Doctor screen: the
// findings above info by severity, or "" when there are none (yet).
func (m *Model) doctorSummary() string {
	r := m.doctorReport
	if r == nil {
		return ""
	}
	var parts []string
	for _, sv := range []doctor.Severity{doctor.Critical, doctor.Warning} {
		if n := r.Counts[sv.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, sv))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "doctor: " + strings.Join(parts, " · ") + " — :doctor shows the findings and their fixes"
}

// doctorView lists the findings, worst first, then the rules that could not run.
func (m *Model) doctorView() string {
	s := m.styles
	var b strings.Builder
	b.WriteString(s.Title.Render("DOCTOR"))
	r := m.doctorReport
	switch {
	case m.opts.Doctor == nil:
		b.WriteString("\n\n" + s.Dim.Render("not available in this session"))
		return b.String()
	case r == nil:
		b.WriteString("\n\n" + s.Dim.Render("judged when the scan completes: the findings of 'idemctl doctor', from this scan's records and the server's INFO"))
		return b.String()
	}
	fs := append([]doctor.Finding(nil), r.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
	counts := []string{}
	for _, sv := range []doctor.Severity{doctor.Critical, doctor.Warning, doctor.Info} {
		if n := r.Counts[sv.String()]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, sv))
		}
	}
	if n := r.Skipped(); n > 0 {
		counts = append(counts, fmt.Sprintf("%d skipped", n))
	}
	if len(counts) == 0 {
		counts = append(counts, "nothing found")
	}
	b.WriteString(s.Dim.Render(fmt.Sprintf("  after the scan of %s records · judged %s · %s",
		units.FormatCount(r.Records), m.doctorAt.Format("15:04:05"), strings.Join(counts, " · "))))
	for _, f := range fs {
		head := strings.ToUpper(f.Severity.String())
		if f.Silenced != "" {
			head = "SILENCED"
		}
		where := ""
		if f.Keyspace != "" {
			where = " [" + inspect.Sanitize(f.Keyspace) + "]"
		}
		b.WriteString("\n\n" + fit(head+"  "+f.Rule+where+": "+inspect.Sanitize(units.OneLine(f.Title)), m.width))
		for _, e := range f.Evidence {
			b.WriteString("\n" + hang("  ", inspect.Sanitize(units.OneLine(e)), m.width))
		}
		if len(f.Samples) > 0 {
			b.WriteString("\n" + fit("  e.g. "+inspect.Sanitize(strings.Join(f.Samples, ", ")), m.width))
		}
		b.WriteString("\n" + hang("  fix: ", inspect.Sanitize(units.OneLine(f.Fix)), m.width))
		if f.Silenced != "" {
			b.WriteString("\n" + s.Dim.Render(fit("  silenced: "+inspect.Sanitize(f.Silenced), m.width)))
		}
	}
	for _, c := range r.Checks {
		if c.Status == doctor.StatusSkipped {
			b.WriteString("\n\n" + s.Dim.Render(fit("SKIPPED  "+c.Rule+": "+inspect.Sanitize(units.OneLine(c.Reason)), m.width)))
		}
	}
	return b.String()
}
