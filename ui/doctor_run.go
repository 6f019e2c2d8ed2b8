package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
)

// The doctor's share of a scan: it sees every batch, and judges once the
// scan is complete (the Doctor screen shows the report).

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
func newDoctorRun(o Options) *doctorRun {
	if o.Doctor == nil {
		return nil
	}
	return &doctorRun{snap: inspect.NewSnapshotBuilder(o.Keyspaces, 10), pass: doctor.NewPass(*o.Doctor)}
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
func (d *doctorRun) judge(ctx context.Context, gen int, c redis.UniversalClient, kss []*inspect.Keyspace, covs []inspect.Coverage, withConfig bool, offline inspect.KeySource) tea.Cmd {
	if d == nil {
		return nil
	}
	return func() tea.Msg {
		snap := d.snap.Finish(ctx, c, covs)
		var srv doctor.Server
		if offline != nil {
			srv = doctor.SnapshotServer(offline.String())
		} else {
			srv = doctor.ReadServer(ctx, c, withConfig)
		}
		return doctorMsg{gen: gen, report: d.pass.Judge(&srv, &snap, kss), config: withConfig && !srv.ConfigRefused}
	}
}
