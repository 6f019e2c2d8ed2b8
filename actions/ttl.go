package actions

import (
	"errors"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// ParseTTL reads a TTL as an operator gives it, the same for every face:
// "" is the action's default (the retention horizon for fail and
// reconcile; expire has none and needs one), "keep" and "retention" name a
// mode (not for expire), anything else is a duration, 0 or at least 1ms
// (Redis counts TTLs in milliseconds: less would be a silent 0, a delete).
// Errors read after the name of the field or flag, e.g. "--ttl: …".
func ParseTTL(kind write.Kind, v string) (TTL, error) {
	switch {
	case v == "" && kind == write.KindExpire:
		return TTL{}, errors.New("required for expire (0 deletes the record)")
	case v == "":
		return TTL{}, nil
	case v == string(TTLKeep) && kind != write.KindExpire:
		return TTL{Mode: TTLKeep}, nil
	case v == string(TTLRetention) && kind != write.KindExpire:
		return TTL{Mode: TTLRetention}, nil
	}
	d, err := units.ParseDuration(v)
	if err != nil {
		return TTL{}, err
	}
	if d != 0 && d < time.Millisecond {
		return TTL{}, errors.New("must be at least 1ms, or 0")
	}
	return TTL{Mode: TTLSet, D: d}, nil
}
