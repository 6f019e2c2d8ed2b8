package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// doctorScreen is the Doctor screen (:doctor): doctor's findings, judged
// after each complete scan from what that scan read (no second pass over
// the keyspace) and one read of the server's INFO (and CONFIG GET until
// the ACL refuses it once).
type doctorScreen struct {
	*shared
	report   *doctor.Report // the newest judgement
	at       time.Time
	noConfig bool   // CONFIG GET was refused: not asked again this session
	from     screen // where esc returns to
	page     pager
	w, h     int
}

func newDoctorScreen(c *shared) *doctorScreen { return &doctorScreen{shared: c} }

// Open shows the findings from their top; from is where esc goes back to.
func (d *doctorScreen) Open(from screen) {
	if from != screenDoctor {
		d.from = from
	}
	d.page.scroll = 0
}

func (d *doctorScreen) SetSize(width, height int) { d.w, d.h = width, height }

// Update keeps the newest judgement (its generation checked by the root)
// and scrolls.
func (d *doctorScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case doctorMsg:
		d.report, d.at = &msg.report, d.Now()
		d.noConfig = !msg.config
	case tea.KeyPressMsg:
		if delta, ok := d.Keys.Moves(msg, d.h); ok {
			d.page.scroll = common.ClampAdd(d.page.scroll, delta) // and to the content when drawn
		}
	}
	return nil
}

// forget drops the judgement of another source (:db, :profile).
func (d *doctorScreen) forget() { d.report, d.noConfig = nil, false }

func (d *doctorScreen) View() string { return d.page.show(d.shared, d.content(), d.h) }

// summary is the Overview's pointer to the Doctor screen: the
// findings above info by severity, or "" when there are none (yet).
func (d *doctorScreen) summary() string {
	r := d.report
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

// content lists the findings, worst first, then the rules that could not run.
func (d *doctorScreen) content() string {
	s := d.Styles
	var b strings.Builder
	b.WriteString(s.Title.Render("DOCTOR"))
	r := d.report
	switch {
	case d.Opts.Doctor == nil:
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
		units.FormatCount(r.Records), d.at.Format("15:04:05"), strings.Join(counts, " · "))))
	for _, f := range fs {
		head := strings.ToUpper(f.Severity.String())
		if f.Silenced != "" {
			head = "SILENCED"
		}
		where := ""
		if f.Keyspace != "" {
			where = " [" + inspect.Sanitize(f.Keyspace) + "]"
		}
		b.WriteString("\n\n" + common.Fit(head+"  "+f.Rule+where+": "+inspect.Sanitize(units.OneLine(f.Title)), d.w))
		for _, e := range f.Evidence {
			b.WriteString("\n" + hang("  ", inspect.Sanitize(units.OneLine(e)), d.w))
		}
		if len(f.Samples) > 0 {
			b.WriteString("\n" + common.Fit("  e.g. "+inspect.Sanitize(strings.Join(f.Samples, ", ")), d.w))
		}
		b.WriteString("\n" + hang("  fix: ", inspect.Sanitize(units.OneLine(f.Fix)), d.w))
		if f.Silenced != "" {
			b.WriteString("\n" + s.Dim.Render(common.Fit("  silenced: "+inspect.Sanitize(f.Silenced), d.w)))
		}
	}
	for _, c := range r.Checks {
		if c.Status == doctor.StatusSkipped {
			b.WriteString("\n\n" + s.Dim.Render(common.Fit("SKIPPED  "+c.Rule+": "+inspect.Sanitize(units.OneLine(c.Reason)), d.w)))
		}
	}
	return b.String()
}
