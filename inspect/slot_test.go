package inspect

import "testing"

// The cluster specification's examples, and hash tags as the server reads them.
func TestKeySlot(t *testing.T) {
	for key, want := range map[string]uint16{
		"123456789":     12739, // CRC16("123456789") = 0x31C3
		"foo":           12182,
		"{user1000}.a":  keySlot("user1000"),
		"foo{{bar}}zap": keySlot("{bar"),
		"foo{bar}{zap}": keySlot("bar"),
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if keySlot("foo{}{bar}") == keySlot("bar") {
		t.Error(`keySlot("foo{}{bar}") used the second tag: an empty first tag hashes the whole key`)
	}
}
