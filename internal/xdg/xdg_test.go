package xdg

import "testing"

func TestPath(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/idemctl/audit.log"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/idemctl/audit.log"},
		{map[string]string{}, ""},
	} {
		if got := Path(func(k string) string { return c.env[k] }, "XDG_STATE_HOME", ".local/state", "audit.log"); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}
