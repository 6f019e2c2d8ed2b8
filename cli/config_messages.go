package cli

import (
	"github.com/idemctl/idemctl/inspect"
)

// streamView is a stream keyspace as config view shows it, defaults filled.
type streamView struct {
	Name              string      `json:"name" yaml:"name"`
	Match             string      `json:"match" yaml:"match"`
	Groups            []string    `json:"groups,omitempty" yaml:"groups,omitempty"`
	ProcessingTimeout string      `json:"processing_timeout" yaml:"processing_timeout"`
	MaxDeliveries     int64       `json:"max_deliveries" yaml:"max_deliveries"`
	DeadLetter        string      `json:"dead_letter,omitempty" yaml:"dead_letter,omitempty"`
	RecoveryConsumer  string      `json:"recovery_consumer" yaml:"recovery_consumer"`
	Verify            *verifyView `json:"verify,omitempty" yaml:"verify,omitempty"`
}

// ledgerView is a ledger keyspace as config view shows it, defaults filled.
type ledgerView struct {
	Name        string `json:"name" yaml:"name"`
	Shape       string `json:"preset" yaml:"preset"`
	Match       string `json:"match" yaml:"match"`
	Window      string `json:"window" yaml:"window"`
	ScoreUnit   string `json:"score_unit,omitempty" yaml:"score_unit,omitempty"`
	KeyTemplate string `json:"key_template,omitempty" yaml:"key_template,omitempty"`
	Period      string `json:"period,omitempty" yaml:"period,omitempty"`
}

// messageViews are the profile's stream and ledger keyspaces.
func messageViews(s *session) ([]streamView, []ledgerView) {
	var streams []streamView
	var ledgers []ledgerView
	sps, _ := s.cfg.StreamSpaces(s.profile)
	for _, sp := range sps {
		v := streamView{Name: sp.Name, Match: inspect.Sanitize(sp.Match), Groups: sp.Groups,
			ProcessingTimeout: sp.ProcessingTimeout.String(), MaxDeliveries: sp.MaxDeliveries,
			DeadLetter: inspect.Sanitize(sp.DeadLetter), RecoveryConsumer: sp.RecoveryConsumer}
		if h := verifyHook(s.cfg, sp.Name); h != nil {
			v.Verify = verifyViewOf(h)
		}
		streams = append(streams, v)
	}
	for _, l := range configLedgers(s) {
		v := ledgerView{Name: l.Name, Shape: l.Shape, Match: inspect.Sanitize(l.Match),
			Window: l.Window.String(), ScoreUnit: l.ScoreUnit, Period: l.Period}
		if l.Template != nil {
			v.KeyTemplate = inspect.Sanitize(l.Template.String())
		}
		ledgers = append(ledgers, v)
	}
	return streams, ledgers
}
